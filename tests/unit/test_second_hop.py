"""The second hop: names, links, and the stage over in-memory stores."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.adapters.rule_based_entities import RuleBasedEntityExtractor
from retrieval.container import running
from retrieval.domain.chunk_identity import keyword_record
from retrieval.domain.models import RagDocument, RetrievalOptions, RetrievalQuery
from retrieval.domain.names import name_key, names_in
from retrieval.domain.ranking.candidate import Candidate
from retrieval.domain.ranking.links import follow_links
from retrieval.errors import BackendUnavailableError
from retrieval.service.pipeline import PipelineState, SearchPlan
from retrieval.service.pipeline.second_hop import (
    LINKS_FOUND,
    NAMES_SEARCHED,
    SECOND_HOP,
    SecondHop,
)
from retrieval.settings import Settings
from retrieval_testkit import InMemoryChunkRepository, InMemoryKeywordIndex
from retrieval_testkit.container import in_memory_container
from retrieval_testkit.multi_hop_corpus import (
    ARCHER,
    CORPUS,
    FANS,
    KISS,
    NS,
    QUESTION,
    TEA,
    TEMPLE,
)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Kiss and Tell (1945 film)", "kiss and tell"),
        ("The Beatles", "Beatles"),
        ("Jörgen  Smit", "jorgen smit"),
        ("Marks & Spencer", "marks spencer"),
    ],
)
def test_names_and_titles_compare_by_their_key(a: str, b: str) -> None:
    assert name_key(a) == name_key(b)


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


class FailingKeywords(InMemoryKeywordIndex):
    async def query(self, text: str, **kwargs: object) -> list:
        raise BackendUnavailableError("keyword index down")


async def stores(
    keywords: InMemoryKeywordIndex | None = None,
) -> tuple[InMemoryKeywordIndex, InMemoryChunkRepository]:
    keywords = keywords or InMemoryKeywordIndex()
    chunks = InMemoryChunkRepository()
    await chunks.upsert_many(CORPUS)
    await keywords.upsert([keyword_record(c) for c in CORPUS], NS)
    return keywords, chunks


def first_ranking(
    question: str = QUESTION, plan: SearchPlan | None = None, **query: object
) -> PipelineState:
    start = PipelineState.start(
        RetrievalQuery(query=question, **query), NS, plan or SearchPlan(second_hop=True)
    )
    candidates = ranked((KISS.chunk_id, 1.6), (ARCHER.chunk_id, 1.2), (TEA.chunk_id, 0.4))
    return start.updated(candidates=tuple(candidates))


async def hop(state: PipelineState, keywords: InMemoryKeywordIndex | None = None) -> PipelineState:
    keywords, chunks = await stores(keywords)
    return await SecondHop(RuleBasedEntityExtractor(), keywords, chunks).run(state)


async def test_the_document_titled_by_a_name_the_best_candidate_mentions_comes_after_it() -> None:
    after = await hop(first_ranking())
    order = [c.chunk_id for c in after.candidates]
    assert order == [KISS.chunk_id, TEMPLE.chunk_id, ARCHER.chunk_id, TEA.chunk_id]
    linked = after.candidates[1]
    assert linked.score == pytest.approx(1.4)
    assert linked.scores == {SECOND_HOP: pytest.approx(1.4)}
    assert after.counts[LINKS_FOUND] == 1
    assert after.counts[NAMES_SEARCHED] >= 1
    assert {KISS.chunk_id, TEMPLE.chunk_id} <= after.chunks.keys()


async def test_names_the_query_asks_about_are_not_followed() -> None:
    keywords = InMemoryKeywordIndex()
    after = await hop(first_ranking(QUESTION + " Was it Shirley Temple?"), keywords)
    assert [c.chunk_id for c in after.candidates] == [
        KISS.chunk_id, ARCHER.chunk_id, TEA.chunk_id,
    ]  # fmt: skip
    assert keywords.queries
    assert not {"Shirley Temple", "Corliss Archer", "Kiss and Tell"} & set(keywords.queries)


async def test_a_chunk_that_names_a_name_without_being_titled_by_it_is_no_link() -> None:
    keywords, _ = await stores()
    hits = await keywords.query("Shirley Temple", top_k=3, namespace=NS)
    assert FANS.chunk_id in [hit.id for hit in hits]
    after = await hop(first_ranking())
    assert FANS.chunk_id not in [c.chunk_id for c in after.candidates]


async def test_a_linked_candidate_ranked_lower_moves_up_and_keeps_its_scores() -> None:
    state = first_ranking()
    lower = Candidate(TEMPLE.chunk_id, 0.1, {"fused": 0.1, "dense": 0.7})
    after = await hop(state.updated(candidates=(*state.candidates, lower)))
    assert [c.chunk_id for c in after.candidates][:2] == [KISS.chunk_id, TEMPLE.chunk_id]
    assert after.candidates[1].scores == {"fused": 0.1, "dense": 0.7, SECOND_HOP: 1.4}
    assert len(after.candidates) == 4


async def test_the_search_keeps_to_the_query_s_filter() -> None:
    after = await hop(first_ranking(domains=("plant_diseases",)))
    assert after.counts[NAMES_SEARCHED] >= 1
    assert TEMPLE.chunk_id not in [c.chunk_id for c in after.candidates]


async def test_switched_off_the_ranking_stays() -> None:
    state = first_ranking(plan=SearchPlan(second_hop=False))
    assert await hop(state) is state


async def test_a_failing_keyword_index_keeps_the_ranking_and_says_degraded() -> None:
    state = first_ranking()
    after = await hop(state, FailingKeywords())
    assert after.candidates == state.candidates
    assert after.degraded == (SECOND_HOP,)


async def test_the_service_follows_names_unless_the_request_says_not_to(tmp_path: Path) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path)
    container = in_memory_container(settings, keyword_index=InMemoryKeywordIndex())
    documents = [
        RagDocument(document_id=c.document_id, title=c.title, domain=c.domain, content=c.content)
        for c in CORPUS
    ]
    async with running(settings, container) as app:
        await app.ingestion.ingest(documents, NS)
        asked = RetrievalQuery(query=QUESTION, namespace=NS, top_k=3)
        with_hop = await app.retrieval.retrieve_query(asked)
        without = await app.retrieval.retrieve_query(
            asked.model_copy(update={"options": RetrievalOptions(second_hop=False)})
        )
    assert "second_hop" in with_hop.timings.stages
    assert "temple" not in [m.document_id for m in without.matches][:2]
    found = [m.document_id for m in with_hop.matches]
    assert found.index("temple") == found.index("kiss") + 1
