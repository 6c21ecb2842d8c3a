"""The knowledge graph: its records at ingestion, deletion and repair, and the graph search."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval.adapters.extraction.entity_names_knowledge import RULES_VERSION
from retrieval.domain.chunk_identity import keyword_record
from retrieval.domain.graph import (
    MAX_DESCRIPTION_CHARS,
    MAX_RELATIONS,
    Extraction,
    Relation,
    graph_record,
    record_version,
    relation,
)
from retrieval.domain.models import GRAPH, RagDocument, RetrievalOptions, RetrievalQuery
from retrieval.errors import BackendUnavailableError
from retrieval.lifecycle import running
from retrieval.service.ingestion.chunk_graph import ChunkGraph
from retrieval.service.retrieval.pipeline import PipelineState, SearchPlan
from retrieval.service.retrieval.pipeline.graph_search import HOP, GraphSearch, first_hop
from retrieval.service.retrieval.pipeline.near_names import NearNames, near
from retrieval.settings import Settings
from retrieval_testkit import InMemoryChunkRepository, InMemoryGraphStore, InMemoryKeywordIndex
from retrieval_testkit.container import in_memory_container
from retrieval_testkit.multi_hop_corpus import ARCHER, CORPUS, FANS, KISS, NS, QUESTION, TEA, TEMPLE
from retrieval_testkit.stages import offline_graph

PORTRAYED = Relation(source="corliss archer", target="shirley temple", type="PORTRAYED_BY")


def named(*names: str) -> Extraction:
    return Extraction(names=names)


def test_a_chunk_is_about_its_title_and_mentions_the_other_names() -> None:
    record = graph_record(KISS, named("Kiss and Tell", "Shirley Temple", "Corliss Archer"))
    assert (record.id, record.about, record.mentions) == (
        KISS.chunk_id,
        ("kiss and tell",),
        ("shirley temple", "corliss archer"),
    )
    assert record.metadata["domain"] == KISS.domain


def test_a_chunk_mentions_the_entities_of_its_relations_and_keeps_a_few() -> None:
    others = [
        Relation(source="kiss and tell", target=f"actor {n}", type="STARS") for n in range(40)
    ]
    stated = Extraction(names=("Corliss Archer",), relations=(PORTRAYED, PORTRAYED, *others))
    record = graph_record(KISS, stated)
    assert record.mentions[:2] == ("corliss archer", "shirley temple")
    assert record.relations[:2] == (PORTRAYED, others[0])
    assert len(record.relations) == MAX_RELATIONS
    assert "actor 39" not in record.mentions


def test_a_relation_is_normalised_and_bounded() -> None:
    stated = relation("The Beatles", "Abbey Road", "recorded-at (studio)", "x " * 300)
    assert stated is not None
    assert (stated.source, stated.target, stated.type) == ("beatles", "abbey road", "RECORDED_AT")
    assert len(stated.description) <= MAX_DESCRIPTION_CHARS
    assert relation("Ghana", "ghana", "IN") is None
    assert relation("Ghana", "Accra", "---").type == "RELATED_TO"


async def graph(store: InMemoryGraphStore | None = None) -> ChunkGraph:
    built = offline_graph(store or InMemoryGraphStore())
    await built.add(CORPUS, NS)
    return built


async def searching(chunk_graph: ChunkGraph | None = None, **limits: int) -> GraphSearch:
    """Graph search over ``chunk_graph`` (the corpus's by default), with near names found in
    the corpus's keyword entries and texts."""
    keywords, chunks = InMemoryKeywordIndex(), InMemoryChunkRepository()
    await keywords.upsert([keyword_record(c) for c in CORPUS], NS)
    await chunks.upsert_many(CORPUS)
    searched = chunk_graph or await graph()
    near = NearNames(keywords, chunks)
    return GraphSearch(searched.store, searched.entities, near, **limits)


def state(question: str = QUESTION, hops: int = 2, **query: object) -> PipelineState:
    plan = SearchPlan(graph=True, graph_hops=hops)
    return PipelineState.start(RetrievalQuery(query=question, **query), NS, plan)


async def test_the_question_s_entities_lead_to_the_chunks_about_them_first() -> None:
    ranked = await (await searching()).ranked(state(hops=1), 10)
    ids = [chunk_id for chunk_id, _ in ranked]
    assert set(ids[:2]) == {KISS.chunk_id, ARCHER.chunk_id}
    assert TEMPLE.chunk_id not in ids
    assert TEA.chunk_id not in ids


async def test_the_second_hop_reaches_the_chunk_about_what_the_first_mentions() -> None:
    ranked = dict(await (await searching()).ranked(state(), 10))
    assert ranked[TEMPLE.chunk_id] == pytest.approx(0.5 * ranked[KISS.chunk_id])
    assert FANS.chunk_id not in ranked


async def test_the_graph_keeps_to_the_query_s_filter() -> None:
    assert await (await searching()).ranked(state(domains=("plant_diseases",)), 10) == []


async def test_a_question_naming_nothing_finds_nothing() -> None:
    assert await (await searching()).ranked(state("what is steamed after picking?"), 10) == []


async def test_the_second_hop_follows_a_relation_before_the_mentions() -> None:
    crowded = named(*(f"Studio {n}" for n in range(8)), "Corliss Archer", "Shirley Temple")

    async def ranked(kiss: Extraction) -> dict[str, float]:
        store = InMemoryGraphStore()
        await store.upsert([graph_record(KISS, kiss), graph_record(TEMPLE, named())], NS)
        search = await searching(offline_graph(store), names_per_source=1)
        return dict(await search.ranked(state("Who portrayed Corliss Archer?"), 10))

    related = await ranked(crowded.model_copy(update={"relations": (PORTRAYED,)}))
    assert related[TEMPLE.chunk_id] == pytest.approx(HOP * related[KISS.chunk_id])
    assert TEMPLE.chunk_id not in await ranked(crowded)


async def test_a_name_no_chunk_gives_leads_to_the_entities_near_it() -> None:
    ranked = dict(await (await searching()).ranked(state("What did Temple and Ghana do?"), 10))
    assert set(ranked) >= {TEMPLE.chunk_id, FANS.chunk_id, KISS.chunk_id}
    assert ranked[TEMPLE.chunk_id] > ranked[KISS.chunk_id]
    assert TEA.chunk_id not in ranked


@pytest.mark.parametrize(
    ("name", "entity", "close"),
    [
        ("harrison bryce jordan barnes", "harrison barnes", True),
        ("belinda", "belinda peregrin", True),
        ("temple", "temple", False),
        ("temple", "ghana", False),
        ("shirley temple", "temple fan clubs", False),
    ],
)
def test_names_are_near_when_the_words_of_one_hold_the_other_s(
    name: str, entity: str, close: bool
) -> None:
    assert near(name, entity) is close


def test_a_rare_entity_weighs_more_than_a_common_one() -> None:
    rare = graph_record(TEMPLE, named())
    common = [graph_record(c, named("Kiss and Tell")) for c in (ARCHER, FANS, TEA)]
    scores = first_hop({"shirley temple": [rare], "kiss and tell": common})
    assert scores[TEMPLE.chunk_id] > scores[ARCHER.chunk_id]


class FailingGraph(InMemoryGraphStore):
    async def linked(self, entities: object, **kwargs: object) -> dict:
        raise BackendUnavailableError("graph store down")


def documents() -> list[RagDocument]:
    return [
        RagDocument(document_id=c.document_id, title=c.title, domain=c.domain, content=c.content)
        for c in CORPUS
    ]


async def test_the_service_fuses_the_graph_and_says_degraded_when_it_fails(
    tmp_path: Path,
) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path)
    asked = RetrievalQuery(
        query=QUESTION, namespace=NS, top_k=5, options=RetrievalOptions(graph=True)
    )
    for store, degraded in ((InMemoryGraphStore(), ()), (FailingGraph(), (GRAPH,))):
        container = in_memory_container(
            settings, keyword_index=InMemoryKeywordIndex(), graph_store=store
        )
        async with running(settings, container) as app:
            await app.ingestion.ingest(documents(), NS)
            found = await app.retrieval.retrieve_query(asked)
        assert found.degraded == degraded
        if not degraded:
            assert GRAPH in found.timings.stages
            assert any(GRAPH in match.scores for match in found.matches)


async def test_graph_records_follow_their_chunks_through_delete_and_repair(
    tmp_path: Path,
) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path)
    store = InMemoryGraphStore()
    container = in_memory_container(settings, graph_store=store)
    async with running(settings, container) as app:
        await app.ingestion.ingest(documents(), NS)
        assert await store.count(NS) == len(CORPUS)
        [health] = (await app.stats.collect()).namespaces
        assert health.entity_count == await store.entity_count(NS) > len(CORPUS)

        [[kiss]] = [page async for page in store.list_ids(NS, prefix="kiss#")]
        await store.delete(namespace=NS, ids=[kiss])
        await store.upsert([graph_record(TEA, named()).model_copy(update={"id": "tea#9"})], NS)
        [broken] = (await app.stats.collect()).namespaces
        assert broken.orphans is not None
        assert (broken.orphans.texts_without_graph, broken.orphans.graph_without_texts) == (1, 1)

        repaired = await app.repair.reconcile(NS)
        assert repaired.repaired_documents == 2
        assert [page async for page in store.list_ids(NS, prefix="kiss#")] == [[kiss]]
        assert [page async for page in store.list_ids(NS, prefix="tea#9")] == []

        await app.library.delete_document("temple", NS)
        assert [page async for page in store.list_ids(NS, prefix="temple#")] == []
        assert await store.count(NS) == len(CORPUS) - 1


async def test_a_repair_makes_again_the_records_another_extractor_made(tmp_path: Path) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path)
    store = InMemoryGraphStore()
    container = in_memory_container(settings, graph_store=store)
    async with running(settings, container) as app:
        await app.ingestion.ingest(documents(), NS)
        written = await store.about(["kiss and tell", "shirley temple"], namespace=NS)
        assert {record.version for record in written} == {record_version(RULES_VERSION)}
        older = [r.model_copy(update={"mentions": (), "version": ""}) for r in written]
        await store.upsert(older, NS)

        found = await app.repair.reconcile(NS, dry_run=True)
        assert (found.outdated_graph, found.documents_to_repair) == (2, 2)
        assert (found.texts_without_graph, found.graph_without_texts) == (0, 0)
        repaired = await app.repair.reconcile(NS)
        assert repaired.repaired_documents == 2
        assert await store.about(["kiss and tell", "shirley temple"], namespace=NS) == written
        assert (await app.repair.reconcile(NS, dry_run=True)).is_consistent
