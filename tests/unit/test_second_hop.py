"""The second hop: names, links, and the stage over in-memory stores."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.container import Container
from retrieval.domain.graph import GraphRecord
from retrieval.domain.models import RagChunk, RagDocument, RetrievalOptions, RetrievalQuery
from retrieval.domain.names import name_key, names_in, title_keys
from retrieval.domain.ranking.candidate import Candidate
from retrieval.domain.ranking.links import follow_links
from retrieval.domain.stage_names import StageName
from retrieval.errors import BackendUnavailableError
from retrieval.lifecycle import running
from retrieval.observability.round_trips import store_round_trip
from retrieval.ports.namespace_generations import Generation
from retrieval.service.caching.remembered_generations import RememberedGenerations
from retrieval.service.retrieval.pipeline import PipelineState, SearchPlan
from retrieval.service.retrieval.pipeline.graph_leads import GraphLeads
from retrieval.service.retrieval.pipeline.second_hop import (
    LINKS_FOUND,
    NAMES_SEARCHED,
    SecondHop,
)
from retrieval.settings import Settings
from retrieval_testkit import InMemoryChunkRepository, InMemoryGraphStore, InMemoryKeywordIndex
from retrieval_testkit.container import in_memory_container
from retrieval_testkit.in_memory_namespace_generations import InMemoryNamespaceGenerations
from retrieval_testkit.multi_hop_corpus import (
    ARCHER,
    CORPUS,
    FANS,
    KISS,
    NS,
    QUESTION,
    TEA,
    TEMPLE,
    chunk,
)
from retrieval_testkit.stages import offline_graph


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Kiss and Tell (1945 film)", "kiss and tell"),
        ("The Beatles", "Beatles"),
        ("Jörgen  Smit", "jorgen smit"),
        ("Marks & Spencer", "marks spencer"),
        ("Ant &amp; Dec", "Ant & Dec"),
    ],
)
def test_names_and_titles_compare_by_their_key(a: str, b: str) -> None:
    assert name_key(a) == name_key(b)


@pytest.mark.parametrize(
    ("title", "keys"),
    [
        ("Newark, New Jersey", ("newark new jersey", "newark")),
        ("John Spencer, 1st Earl Spencer", ("john spencer 1st earl spencer", "john spencer")),
        ("Kiss and Tell (1945 film)", ("kiss and tell",)),
        ("Fish, and chips", ("fish and chips",)),
        ("Rho, Rac and Cdc42 regulate actin", ("rho rac and cdc42 regulate actin",)),
        ("Rho, Rac, Cdc42", ("rho rac cdc42",)),
        ("METHODS AND RESULTS", ()),
        ("NASA", ("nasa",)),
        ("Fish,", ("fish",)),
        ("", ()),
    ],
)
def test_a_title_names_what_its_document_is_about_with_and_without_its_qualifier(
    title: str, keys: tuple[str, ...]
) -> None:
    assert title_keys(title) == keys


def test_a_text_names_a_name_in_whole_words() -> None:
    question = name_key(QUESTION)
    assert names_in(question, "Corliss Archer")
    assert names_in(question, "Kiss")
    assert not names_in(question, "Archers")
    assert not names_in(question, "Shirley Temple")
    assert not names_in(question, "(film)")


def ranked(*pairs: tuple[str, float]) -> list[Candidate]:
    return [Candidate(chunk_id, score, {"fused": score}) for chunk_id, score in pairs]


def test_links_come_right_after_the_candidate_that_leads_to_them() -> None:
    first = ranked(("a", 2.0), ("b", 1.6), ("c", 1.0), ("d", 0.5))
    linked = follow_links(first, {"a": ["x", "d"], "c": ["a"]}, "hop")
    assert [c.chunk_id for c in linked] == ["a", "x", "d", "b", "c"]
    assert [c.score for c in linked] == pytest.approx([2.0, 1.8666, 1.7333, 1.6, 1.0], abs=1e-3)
    assert linked[1].scores == {"hop": linked[1].score}
    assert linked[2].scores == {"fused": 0.5, "hop": linked[2].score}
    assert linked[0] == first[0]


def test_a_link_of_a_link_follows_it_and_the_last_candidate_steps_down_one_point() -> None:
    linked = follow_links(ranked(("a", 1.0)), {"a": ["x"], "x": ["y", "a"]}, "hop")
    assert [(c.chunk_id, c.score) for c in linked] == [
        ("a", 1.0),
        ("x", pytest.approx(2 / 3)),
        ("y", pytest.approx(1 / 3)),
    ]


IDS = st.sampled_from("abcdefghxyz")


@settings(max_examples=200, deadline=None)
@given(
    scores=st.lists(st.floats(-5, 5), max_size=8, unique=True),
    links=st.dictionaries(IDS, st.lists(IDS, max_size=4), max_size=5),
)
def test_following_links_keeps_every_chunk_once_the_best_on_top_and_scores_in_order(
    scores: list[float], links: dict[str, list[str]]
) -> None:
    first = ranked(*zip("abcdefgh", sorted(scores, reverse=True), strict=False))
    linked = follow_links(first, links, "hop")
    ids = [c.chunk_id for c in linked]
    assert len(ids) == len(set(ids))
    assert set(ids) >= {c.chunk_id for c in first}
    assert set(ids) - {c.chunk_id for c in first} <= {
        i for linked in links.values() for i in linked
    }
    assert [c.score for c in linked] == sorted((c.score for c in linked), reverse=True)
    if first:
        assert linked[0] == first[0]
    if not links:
        assert linked == first


class RecordingGraph(InMemoryGraphStore):
    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    async def about(self, entities: Sequence[str], **kwargs: Any) -> list[GraphRecord]:
        self.asked += entities
        return await super().about(entities, **kwargs)


class FailingGraph(InMemoryGraphStore):
    async def about(self, entities: Sequence[str], **kwargs: Any) -> list[GraphRecord]:
        raise BackendUnavailableError("graph store down")


async def hop(
    state: PipelineState,
    store: InMemoryGraphStore | None = None,
    corpus: Sequence[RagChunk] = CORPUS,
) -> PipelineState:
    """The stage over ``corpus``'s graph records, as ingestion writes them."""
    graph = offline_graph(store or InMemoryGraphStore())
    await graph.add(corpus, NS)
    generations = RememberedGenerations(InMemoryNamespaceGenerations())
    return await SecondHop(GraphLeads(graph.store, generations)).run(state)


def first_ranking(
    question: str = QUESTION, plan: SearchPlan | None = None, **query: object
) -> PipelineState:
    start = PipelineState.start(
        RetrievalQuery(query=question, **query), NS, plan or SearchPlan(second_hop=True)
    )
    candidates = ranked((KISS.chunk_id, 1.6), (ARCHER.chunk_id, 1.2), (TEA.chunk_id, 0.4))
    return start.updated(candidates=tuple(candidates))


async def test_the_document_titled_by_a_name_the_best_candidate_mentions_comes_after_it() -> None:
    after = await hop(first_ranking())
    order = [c.chunk_id for c in after.candidates]
    assert order == [KISS.chunk_id, TEMPLE.chunk_id, ARCHER.chunk_id, TEA.chunk_id]
    linked = after.candidates[1]
    assert linked.score == pytest.approx(1.4)
    assert linked.scores == {StageName.SECOND_HOP: pytest.approx(1.4)}
    assert after.counts[LINKS_FOUND] == 1
    assert after.counts[NAMES_SEARCHED] >= 1
    assert not after.chunks


async def test_names_the_query_asks_about_are_not_followed() -> None:
    store = RecordingGraph()
    after = await hop(first_ranking(QUESTION + " Was it Shirley Temple?"), store)
    assert [c.chunk_id for c in after.candidates] == [
        KISS.chunk_id, ARCHER.chunk_id, TEA.chunk_id,
    ]  # fmt: skip
    assert store.asked
    assert not {"shirley temple", "corliss archer", "kiss and tell"} & set(store.asked)


async def test_a_chunk_that_names_a_name_without_being_titled_by_it_is_no_link() -> None:
    after = await hop(first_ranking())
    assert FANS.chunk_id not in [c.chunk_id for c in after.candidates]


async def test_a_linked_candidate_ranked_lower_moves_up_and_keeps_its_scores() -> None:
    state = first_ranking()
    lower = Candidate(TEMPLE.chunk_id, 0.1, {"fused": 0.1, "dense": 0.7})
    after = await hop(state.updated(candidates=(*state.candidates, lower)))
    assert [c.chunk_id for c in after.candidates][:2] == [KISS.chunk_id, TEMPLE.chunk_id]
    assert after.candidates[1].scores == {"fused": 0.1, "dense": 0.7, StageName.SECOND_HOP: 1.4}
    assert len(after.candidates) == 4


LEADS = chunk(
    "leads",
    "Leads",
    "It names Alma Reville, Bo Widerberg, the 1970 Asian Games, Newark and Ant & Dec.",
)
REVILLE = chunk("reville", "Alma Reville", "Alma Reville was a screenwriter.")
WIDERBERG = chunk("widerberg", "Bo Widerberg", "Bo Widerberg was a director.")
GAMES = chunk("games", "1970 Asian Games", "The 1970 Asian Games were held in Bangkok.")
NEWARK = chunk("newark", "Newark, New Jersey", "Newark is a city in New Jersey.")
DUO = chunk("duo", "Ant &amp; Dec", "Ant & Dec are a duo of presenters.")
LINKED = (LEADS, REVILLE, WIDERBERG, GAMES, NEWARK, DUO)


DISTRACTORS = (
    chunk("posts", "Government posts", "A government position held by a woman in the film."),
    chunk("roles", "Film roles", "The woman who portrayed a girl in a film held a position."),
)


def led_from(*others: tuple[str, float]) -> PipelineState:
    state = PipelineState.start(RetrievalQuery(query="Who?"), NS, SearchPlan(second_hop=True))
    return state.updated(candidates=tuple(ranked((LEADS.chunk_id, 2.0), *others)))


async def test_of_the_documents_a_source_leads_to_those_the_searches_ranked_come_first() -> None:
    others = (TEA.chunk_id, 1.0), (FANS.chunk_id, 0.9), (DUO.chunk_id, 0.3), (GAMES.chunk_id, 0.2)
    after = await hop(led_from(*others), corpus=(*LINKED, TEA, FANS))
    assert [c.chunk_id for c in after.candidates] == [
        LEADS.chunk_id, DUO.chunk_id, GAMES.chunk_id, TEA.chunk_id, FANS.chunk_id,
    ]  # fmt: skip
    unranked = await hop(led_from(), corpus=LINKED)
    assert [c.chunk_id for c in unranked.candidates] == [
        LEADS.chunk_id, REVILLE.chunk_id, WIDERBERG.chunk_id,
    ]  # fmt: skip


async def test_titles_qualified_by_a_comma_led_by_a_year_or_encoded_are_linked() -> None:
    after = await hop(led_from(), corpus=(LEADS, GAMES))
    assert [c.chunk_id for c in after.candidates] == [LEADS.chunk_id, GAMES.chunk_id]
    after = await hop(led_from(), corpus=(LEADS, NEWARK, DUO))
    assert [c.chunk_id for c in after.candidates] == [
        LEADS.chunk_id, NEWARK.chunk_id, DUO.chunk_id,
    ]  # fmt: skip


async def test_the_sources_are_not_linked_to_one_another() -> None:
    state = led_from((REVILLE.chunk_id, 1.5), (WIDERBERG.chunk_id, 1.0), (GAMES.chunk_id, 0.2))
    after = await hop(state, corpus=LINKED)
    assert [c.chunk_id for c in after.candidates] == [
        LEADS.chunk_id, GAMES.chunk_id, NEWARK.chunk_id, REVILLE.chunk_id, WIDERBERG.chunk_id,
    ]  # fmt: skip


async def test_the_lookup_keeps_to_the_query_s_filter() -> None:
    after = await hop(first_ranking(domains=("plant_diseases",)))
    assert after.counts[NAMES_SEARCHED] >= 1
    assert TEMPLE.chunk_id not in [c.chunk_id for c in after.candidates]


async def test_switched_off_the_ranking_stays() -> None:
    state = first_ranking(plan=SearchPlan(second_hop=False))
    assert await hop(state) is state


async def test_a_failing_graph_store_keeps_the_ranking_and_says_degraded() -> None:
    state = first_ranking()
    after = await hop(state, FailingGraph())
    assert after.candidates == state.candidates
    assert after.degraded == (StageName.SECOND_HOP,)


async def test_the_service_follows_names_unless_the_request_says_not_to(tmp_path: Path) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path)
    container = in_memory_container(settings, keyword_index=InMemoryKeywordIndex())
    documents = [
        RagDocument(document_id=c.document_id, title=c.title, domain=c.domain, content=c.content)
        for c in (*CORPUS, *DISTRACTORS)
    ]
    async with running(settings, container) as app:
        await app.ingestion.ingest(documents, NS)
        asked = RetrievalQuery(query=QUESTION, namespace=NS, top_k=4)
        with_hop = await app.retrieval.retrieve_query(asked)
        without = await app.retrieval.retrieve_query(
            asked.model_copy(update={"options": RetrievalOptions(second_hop=False)})
        )
    assert StageName.SECOND_HOP in with_hop.timings.stages
    assert "temple" not in [m.document_id for m in without.matches]
    found = [m.document_id for m in with_hop.matches]
    assert found.index("temple") == found.index("kiss") + 1


class RemoteChunks(InMemoryChunkRepository):
    """Texts that count a round trip for each read, as the MongoDB store's client does."""

    async def get_many(self, chunk_ids: Sequence[str], namespace: str) -> dict[str, RagChunk]:
        store_round_trip()
        return await super().get_many(chunk_ids, namespace)


class RemoteGraph(RecordingGraph):
    async def get_many(self, ids: Sequence[str], namespace: str) -> dict[str, GraphRecord]:
        store_round_trip()
        return await super().get_many(ids, namespace)

    async def about(self, entities: Sequence[str], **kwargs: Any) -> list[GraphRecord]:
        store_round_trip()
        return await super().about(entities, **kwargs)


class RemoteGenerations(InMemoryNamespaceGenerations):
    async def current(self, namespace: str) -> int:
        store_round_trip()
        return await super().current(namespace)


DOCUMENTS = [
    RagDocument(document_id=c.document_id, title=c.title, domain=c.domain, content=c.content)
    for c in (*CORPUS, *DISTRACTORS)
]


def remote_stores(settings: Settings, graph: RemoteGraph | None = None) -> Container:
    """The in-memory application whose stores count a round trip for each read."""
    return in_memory_container(
        settings,
        keyword_index=InMemoryKeywordIndex(),
        chunk_repository=RemoteChunks(),
        graph_store=graph or RemoteGraph(),
        namespace_generations=RemoteGenerations(),
    )


async def test_the_texts_are_read_once_and_the_graph_once_until_the_namespace_is_written(
    tmp_path: Path,
) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path, chunk_cache_entries=0)
    async with running(settings, remote_stores(settings)) as app:
        await app.ingestion.ingest(DOCUMENTS[:-1], NS)
        first = await app.retrieval.retrieve(QUESTION, namespace=NS, top_k=4)
        again = await app.retrieval.retrieve(QUESTION, namespace=NS, top_k=5)
        served = await app.retrieval.retrieve(QUESTION, namespace=NS, top_k=5)
        await app.ingestion.ingest(DOCUMENTS[-1:], NS)
        written = await app.retrieval.retrieve(QUESTION, namespace=NS, top_k=5)
    found = [m.document_id for m in first.matches]
    assert found.index("temple") == found.index("kiss") + 1
    assert first.timings.round_trips == {"cache": 1, "second_hop": 2, "fetch": 1}
    assert again.timings.round_trips == {"cache": 1, "fetch": 1}
    assert served.cached
    assert served.timings.round_trips == {"cache": 1}
    assert written.timings.round_trips == {"cache": 1, "second_hop": 2, "fetch": 1}


async def test_without_a_result_cache_a_question_asked_again_reads_the_generation_not_the_graph(
    tmp_path: Path,
) -> None:
    settings = Settings(
        _env_file=None, data_dir=tmp_path, chunk_cache_entries=0, result_cache_entries=0
    )
    graph = RemoteGraph()
    async with running(settings, remote_stores(settings, graph)) as app:
        await app.ingestion.ingest(DOCUMENTS, NS)
        first = await app.retrieval.retrieve(QUESTION, namespace=NS, top_k=4)
        looked_up = list(graph.asked)
        for _ in range(2):  # the first records were read before any generation
            again = await app.retrieval.retrieve(QUESTION, namespace=NS, top_k=4)
    assert first.timings.round_trips == {"second_hop": 3, "fetch": 1}
    assert again.timings.round_trips == {"second_hop": 1, "fetch": 1}
    assert graph.asked == looked_up
    found = [m.document_id for m in again.matches]
    assert found.index("temple") == found.index("kiss") + 1


RECORDS = (
    GraphRecord(id="kiss#0", about=("kiss and tell",), mentions=("shirley temple",)),
    GraphRecord(id="temple#0", about=("shirley temple",), metadata={"domain": "politics"}),
    GraphRecord(id="temple#1", about=("shirley temple",), metadata={"domain": "film"}),
)


LONG_AGO = 0.0
"""When a call began that any generation read may serve."""


async def leads_over(
    graph: InMemoryGraphStore,
) -> tuple[GraphLeads, RememberedGenerations, InMemoryNamespaceGenerations]:
    await graph.upsert(RECORDS, NS)
    stored = InMemoryNamespaceGenerations()
    generations = RememberedGenerations(stored)
    await generations.current(NS)
    return GraphLeads(graph, generations), generations, stored


async def test_kept_records_are_filtered_as_the_store_filters_them() -> None:
    graph = RecordingGraph()
    leads, _, _ = await leads_over(graph)
    film = {"domain": {"$eq": "film"}}
    filmed = await leads.about(["shirley temple"], NS, film, began=LONG_AGO)
    assert [r.id for r in filmed] == ["temple#1"]
    assert [r.id for r in await leads.about(["shirley temple"], NS, None, began=LONG_AGO)] == [
        "temple#0", "temple#1",
    ]  # fmt: skip
    assert await leads.about(["shirley temple"], NS, film, began=LONG_AGO) == await graph.about(
        ["shirley temple"], namespace=NS, filter=film
    )
    assert graph.asked == ["shirley temple", "shirley temple"]


async def test_a_new_generation_reads_the_graph_again() -> None:
    graph = RecordingGraph()
    leads, generations, stored = await leads_over(graph)
    assert await leads.records(["kiss#0", "nobody#0"], NS) == {"kiss#0": RECORDS[0]}
    await leads.about(["shirley temple"], NS, None, began=LONG_AGO)
    await graph.upsert([GraphRecord(id="temple#2", about=("shirley temple",))], NS)
    assert len(await leads.about(["shirley temple"], NS, None, began=LONG_AGO)) == 2
    await stored.advance(NS)
    await generations.current(NS)
    assert len(await leads.about(["shirley temple"], NS, None, began=LONG_AGO)) == 3
    assert graph.asked == ["shirley temple", "shirley temple"]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_without_a_result_cache_lookups_are_kept_under_the_generation_of_the_call() -> None:
    graph, stored, clock = RecordingGraph(), InMemoryNamespaceGenerations(), Clock()
    await graph.upsert(RECORDS, NS)
    leads = GraphLeads(graph, RememberedGenerations(stored, clock=clock))
    for _ in range(2):
        clock.now += 1
        assert len(await leads.about(["shirley temple"], NS, None, began=clock.now)) == 2
    assert graph.asked == ["shirley temple"]
    assert stored.current_calls == 2
    await graph.upsert([GraphRecord(id="temple#2", about=("shirley temple",))], NS)
    await stored.advance(NS)
    clock.now += 1
    assert len(await leads.about(["shirley temple"], NS, None, began=clock.now)) == 3
    assert graph.asked == ["shirley temple", "shirley temple"]


class FlakyGenerations(InMemoryNamespaceGenerations):
    down = False

    async def current(self, namespace: str) -> Generation:
        if self.down:
            raise BackendUnavailableError("generations down")
        return await super().current(namespace)


async def test_a_failed_generation_read_forgets_the_one_read_before() -> None:
    stored = FlakyGenerations()
    generations = RememberedGenerations(stored)
    await stored.advance(NS)
    assert (await generations.current(NS)).number == 1
    assert generations.last_read(NS) == 1
    stored.down = True
    with pytest.raises(BackendUnavailableError):
        await generations.current(NS)
    assert generations.last_read(NS) is None


async def test_a_failed_generation_read_leaves_the_lookup_to_the_store() -> None:
    graph, stored = RecordingGraph(), FlakyGenerations()
    await graph.upsert(RECORDS, NS)
    leads = GraphLeads(graph, RememberedGenerations(stored))
    stored.down = True
    for _ in range(2):
        assert len(await leads.about(["shirley temple"], NS, None, began=0.0)) == 2
    assert graph.asked == ["shirley temple", "shirley temple"]
