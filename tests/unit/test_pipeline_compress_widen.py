"""The redundancy filter and the widening to neighbouring chunks as stages, over the
in-memory doubles."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.domain.models import (
    DEFAULT_DOMAINS,
    RagChunk,
    RagDocument,
    RetrievalOptions,
    RetrievalQuery,
    SearchMode,
)
from retrieval.domain.neighbours import merged_text
from retrieval.domain.stage_names import StageName
from retrieval.domain.vectors import VectorRecord
from retrieval.service.ingestion.chunking import ChunkingPolicy
from retrieval.service.ingestion.consistency import ChunkStores
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.retrieval.pipeline import (
    Candidate,
    PipelineState,
    SearchPlan,
)
from retrieval.service.retrieval.pipeline.compress import Compress
from retrieval.service.retrieval.pipeline.dense_scores import CompleteDenseScores
from retrieval.service.retrieval.pipeline.hydrate import Hydrate
from retrieval.service.retrieval.pipeline.widen import Widen
from retrieval.service.retrieval.retrieval_service import RetrievalService
from retrieval_testkit import (
    HashEmbedder,
    InMemoryChunkRepository,
    InMemoryDocumentLedger,
    InMemoryKeywordIndex,
    InMemoryVectorIndex,
)
from retrieval_testkit.in_memory_namespace_generations import InMemoryNamespaceGenerations
from retrieval_testkit.stages import candidate_texts, offline_stages, uncached
from retrieval_testkit.telemetry import quiet_telemetry

NS = "stages"


def state(plan: SearchPlan | None = None, **fields: object) -> PipelineState:
    start = PipelineState.start(RetrievalQuery(query="tea", top_k=10), NS, plan or SearchPlan())
    return replace(start, **fields)


def ranked(*ids: str) -> tuple[Candidate, ...]:
    return tuple(
        Candidate(i, 1.0 - n / 10, {"dense": 1.0 - n / 10, "keyword": float(n)})
        for n, i in enumerate(ids)
    )


def vectors(**rows: tuple[float, ...]) -> dict[str, np.ndarray]:
    return {i: np.asarray(v, dtype=np.float32) for i, v in rows.items()}


NEAR_COPIES = vectors(a=(1.0, 0.0), b=(0.99, 0.01), c=(0.0, 1.0))


async def test_compression_is_off_by_default() -> None:
    before = state(candidates=ranked("a", "b", "c"), vectors=NEAR_COPIES)
    assert await Compress().run(before) == before


async def test_a_near_copy_is_dropped_and_the_rest_stay_as_they_were() -> None:
    before = state(
        plan=SearchPlan(redundancy_threshold=0.95),
        candidates=ranked("a", "b", "c"),
        vectors=NEAR_COPIES,
    )
    after = await Compress().run(before)
    assert after.candidates == (before.candidates[0], before.candidates[2])


async def test_a_candidate_without_a_stored_vector_is_kept() -> None:
    before = state(
        plan=SearchPlan(redundancy_threshold=0.5),
        candidates=ranked("a", "keyword-only", "b"),
        vectors=NEAR_COPIES,
    )
    after = await Compress().run(before)
    assert [c.chunk_id for c in after.candidates] == ["a", "keyword-only"]


@settings(max_examples=100)
@given(
    st.lists(st.lists(st.integers(-2, 2), min_size=2, max_size=2), max_size=10),
    st.floats(0.05, 1.0),
)
def test_compression_keeps_an_ordered_subset_of_the_candidates_unchanged(
    rows: list[list[int]], threshold: float
) -> None:
    ids = [f"c{n}" for n in range(len(rows))]
    before = state(
        plan=SearchPlan(redundancy_threshold=threshold),
        candidates=ranked(*ids),
        vectors={i: np.asarray(row, dtype=np.float32) for i, row in zip(ids, rows, strict=True)},
    )
    after = asyncio.run(Compress().run(before))
    positions = [before.candidates.index(c) for c in after.candidates]
    assert positions == sorted(set(positions))
    if threshold == 1.0:
        assert after.candidates == before.candidates


def test_compression_asks_the_searches_for_more_than_top_k() -> None:
    assert SearchPlan(mode=SearchMode.DENSE).depth(3) == 3
    assert SearchPlan(mode=SearchMode.DENSE, redundancy_threshold=0.9).depth(3) == 100


class CountingIndex(InMemoryVectorIndex):
    def __init__(self) -> None:
        super().__init__()
        self.fetched: list[list[str]] = []

    async def fetch(self, ids, namespace):  # type: ignore[no-untyped-def]
        self.fetched.append(list(ids))
        return await super().fetch(ids, namespace)


@pytest.mark.parametrize(("threshold", "fetched"), [(1.0, []), (0.95, [["a", "b", "c"]])])
async def test_the_vectors_the_search_did_not_return_are_fetched_only_for_compression(
    threshold: float, fetched: list[list[str]]
) -> None:
    index = CountingIndex()
    await index.upsert([VectorRecord(id=i, values=tuple(v)) for i, v in NEAR_COPIES.items()], NS)
    before = state(
        plan=SearchPlan(mode=SearchMode.DENSE, redundancy_threshold=threshold),
        candidates=ranked("a", "b", "c"),
        query_vector=np.array([1.0, 0.0], np.float32),
    )
    after = await CompleteDenseScores(HashEmbedder(dimension=2), index).run(before)
    assert index.fetched == fetched
    assert set(after.vectors) == {i for ids in fetched for i in ids}


class CountingChunks(InMemoryChunkRepository):
    def __init__(self) -> None:
        super().__init__()
        self.listed: list[str] = []

    async def chunk_ids(self, document_id: str, namespace: str) -> set[str]:
        self.listed.append(document_id)
        return await super().chunk_ids(document_id, namespace)


def piece(document_id: str, position: int, content: str) -> RagChunk:
    return RagChunk(
        chunk_id=f"{document_id}#{position:04d}-0123456789abcdef",
        document_id=document_id,
        namespace=NS,
        title=document_id,
        domain="tea_cultivation",
        position=position,
        content=content,
    )


PRUNING = [
    piece("pruning", 0, "Pruning\n\nPrune tea bushes in the cold season when"),
    piece("pruning", 1, "Pruning\n\nin the cold season when sap is low."),
    piece("pruning", 2, "Pruning\n\nA light skiff keeps the plucking table."),
    piece("pruning", 3, "Pruning\n\nCollar pruning renews an old bush."),
]
MONSOON = [piece("monsoon", p, f"Monsoon\n\nRain part {p}.") for p in range(3)]


async def hydrated(chunks: InMemoryChunkRepository, plan: SearchPlan, *ids: str) -> PipelineState:
    after = await Hydrate(candidate_texts(chunks)).run(state(plan=plan, candidates=ranked(*ids)))
    chunks.get_many_calls = 0
    return after


@pytest.fixture
async def chunks() -> CountingChunks:
    chunks = CountingChunks()
    await chunks.upsert_many([*PRUNING, *MONSOON])
    return chunks


async def test_widening_is_off_by_default(chunks: CountingChunks) -> None:
    before = await hydrated(chunks, SearchPlan(), PRUNING[1].chunk_id)
    assert await Widen(chunks).run(before) == before
    assert chunks.listed == []
    assert chunks.get_many_calls == 0


async def test_each_match_gets_its_neighbours_text_in_one_fetch(chunks: CountingChunks) -> None:
    plan = SearchPlan(neighbours=1)
    before = await hydrated(chunks, plan, PRUNING[1].chunk_id, MONSOON[0].chunk_id)
    after = await Widen(chunks).run(before)
    assert [m.content for m in after.matches] == [
        "Pruning\n\nPrune tea bushes in the cold season when sap is low."
        "\n\nA light skiff keeps the plucking table.",
        "Monsoon\n\nRain part 0.\n\nRain part 1.",
    ]
    assert [m.model_copy(update={"content": ""}) for m in after.matches] == [
        m.model_copy(update={"content": ""}) for m in before.matches
    ]
    assert sorted(chunks.listed) == ["monsoon", "pruning"]
    assert chunks.get_many_calls == 1
    assert after.candidates == before.candidates


async def test_a_neighbour_that_is_a_match_is_not_repeated(chunks: CountingChunks) -> None:
    plan = SearchPlan(neighbours=2)
    before = await hydrated(chunks, plan, PRUNING[3].chunk_id, PRUNING[2].chunk_id)
    after = await Widen(chunks).run(before)
    assert [m.content for m in after.matches] == [
        PRUNING[3].content,
        merged_text([c.content for c in PRUNING[:3]]),
    ]
    assert chunks.listed == ["pruning"]


async def test_texts_a_stage_already_fetched_are_not_fetched_again(
    chunks: CountingChunks,
) -> None:
    plan = SearchPlan(neighbours=1)
    before = await hydrated(chunks, plan, PRUNING[1].chunk_id)
    before = replace(before, chunks={c.chunk_id: c for c in (PRUNING[0], PRUNING[2])})
    after = await Widen(chunks).run(before)
    assert chunks.get_many_calls == 0
    assert after.matches[0].content.endswith("A light skiff keeps the plucking table.")


def document(document_id: str, title: str, content: str) -> RagDocument:
    return RagDocument(
        document_id=document_id, title=title, domain="tea_cultivation", content=content
    )


SECTION = " ".join(f"word{n}" for n in range(40))


async def test_both_stages_run_in_the_service_and_stay_off_by_default() -> None:
    embedder, index, keywords = HashEmbedder(), InMemoryVectorIndex(), InMemoryKeywordIndex()
    chunks = InMemoryChunkRepository()
    ingestion = IngestionService(
        embedder,
        ChunkStores(index, keywords, chunks),
        InMemoryDocumentLedger(),
        InMemoryNamespaceGenerations(),
        DEFAULT_DOMAINS,
        NS,
        ChunkingPolicy(max_words=20, overlap_words=5),
    )
    await ingestion.ingest(
        [
            document("original", "Withering", "Withering dries the leaf for rolling."),
            document("copy", "Withering", "Withering dries the leaf for rolling."),
            document("long", "Long", f"{SECTION}\n\nwithering rolling"),
        ],
        NS,
    )
    stages = offline_stages(embedder, index, keywords, chunks)
    names = [stage.name for stage in stages]
    assert (
        names.index(StageName.RERANK)
        < names.index(StageName.COMPRESS)
        < names.index(StageName.DIVERSIFY)
    )
    assert names[-2:] == [StageName.FETCH, StageName.WIDEN]
    service = RetrievalService(
        stages, DEFAULT_DOMAINS, NS, SearchPlan(), uncached(), quiet_telemetry()
    )

    plain = await service.retrieve("withering leaf rolling", top_k=2)
    assert {m.document_id for m in plain.matches} == {"original", "copy"}
    switched = await service.retrieve(
        "withering leaf rolling",
        top_k=2,
        options=RetrievalOptions(redundancy_threshold=0.95, neighbours=2),
    )
    assert [m.document_id for m in switched.matches][1:] == ["long"]
    long_match = switched.matches[1]
    assert long_match.content.split() == ["Long", *SECTION.split(), "withering", "rolling"]
