"""A namespace past the threshold is searched through its HNSW graph: recall against exact
search, filters, deletes, graph additions, and the graph saved and found again at start-up."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from retrieval.adapters.embedded_index.ann_graph import HnswAnnGraph
from retrieval.adapters.embedded_index.vector_index import EmbeddedVectorIndex
from retrieval.container import Container
from retrieval.domain.vectors import VectorRecord
from retrieval.lifecycle import resolve
from retrieval.settings import Settings

DIMENSION = 32
SIZE = 2_000
THRESHOLD = 500


def clustered(count: int, seed: int) -> np.ndarray:
    """Unit vectors around 30 centres, shaped like embeddings rather than uniform noise."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(30, DIMENSION))
    values = centres[rng.integers(0, 30, count)] + rng.normal(scale=0.35, size=(count, DIMENSION))
    return (values / np.linalg.norm(values, axis=1, keepdims=True)).astype(np.float32)


VECTORS = clustered(SIZE, seed=1)
QUERIES = clustered(30, seed=2)


def corpus(vectors: np.ndarray = VECTORS, prefix: str = "r") -> list[VectorRecord]:
    return [
        VectorRecord.model_construct(
            id=f"{prefix}{n}", values=tuple(row), metadata={"bucket": n % 100, "half": n % 2 == 0}
        )
        for n, row in enumerate(vectors.tolist())
    ]


def exact_top(query: np.ndarray, keep: np.ndarray, top_k: int = 10) -> set[str]:
    scores = np.where(keep, VECTORS @ query, -np.inf)
    return {f"r{n}" for n in np.argsort(-scores)[:top_k]}


@pytest.fixture
def graph_searches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many searches went through a graph."""
    calls: list[int] = []
    search = HnswAnnGraph.search

    def counted(self: HnswAnnGraph, *args: object) -> np.ndarray:
        calls.append(1)
        return search(self, *args)

    monkeypatch.setattr(HnswAnnGraph, "search", counted)
    return calls


async def recall(index: EmbeddedVectorIndex, flt: dict | None, keep: np.ndarray) -> float:
    hits = 0
    for query in QUERIES:
        found = await index.query(query.tolist(), top_k=10, namespace="ns", filter=flt)
        assert len(found) == min(10, int(keep.sum()))
        assert [m.score for m in found] == sorted((m.score for m in found), reverse=True)
        hits += len({m.id for m in found} & exact_top(query, keep))
    return hits / (10 * len(QUERIES))


async def large_index(path: Path | None = None) -> EmbeddedVectorIndex:
    index = EmbeddedVectorIndex(path, ann_min_vectors=THRESHOLD, exact_subset_rows=200)
    await index.upsert(corpus(), namespace="ns")
    await index.settle()
    return index


async def test_a_namespace_under_the_threshold_is_searched_exactly(
    graph_searches: list[int],
) -> None:
    index = EmbeddedVectorIndex(ann_min_vectors=THRESHOLD)
    await index.upsert(corpus()[: THRESHOLD - 1], namespace="ns")
    await index.settle()
    found = await index.query(QUERIES[0].tolist(), top_k=10, namespace="ns")
    assert len(found) == 10
    assert graph_searches == []
    assert (await index.footprint()).memory_bytes == (THRESHOLD - 1) * DIMENSION * 4


async def test_past_the_threshold_the_graph_answers_with_high_recall(
    graph_searches: list[int],
) -> None:
    index = await large_index()
    assert await recall(index, None, np.ones(SIZE, dtype=bool)) >= 0.95
    assert len(graph_searches) == len(QUERIES)
    assert (await index.footprint()).memory_bytes > 2 * SIZE * DIMENSION * 4


@pytest.mark.parametrize(
    ("flt", "keep", "through_graph"),
    [
        ({"bucket": 7}, np.arange(SIZE) % 100 == 7, False),
        ({"bucket": {"$lt": 5}}, np.arange(SIZE) % 100 < 5, False),
        ({"bucket": {"$lt": 10}}, np.arange(SIZE) % 100 < 10, True),
        ({"half": True}, np.arange(SIZE) % 2 == 0, True),
    ],
    ids=["1%", "5%", "10%", "50%"],
)
async def test_filters_are_exact_on_small_subsets_and_go_through_the_graph_on_large_ones(
    graph_searches: list[int], flt: dict, keep: np.ndarray, through_graph: bool
) -> None:
    index = await large_index()
    found_recall = await recall(index, flt, keep)
    assert bool(graph_searches) is through_graph
    if through_graph:
        assert found_recall >= 0.95
    else:
        assert found_recall == 1.0


async def test_deleted_and_overwritten_records_never_come_back_from_the_graph(
    graph_searches: list[int],
) -> None:
    index = await large_index()
    await index.delete(namespace="ns", ids=[f"r{n}" for n in range(0, SIZE, 2)])
    moved = [
        VectorRecord.model_construct(id=f"r{n}", values=tuple(-VECTORS[n]), metadata={})
        for n in range(1, 200, 2)
    ]
    await index.upsert(moved, namespace="ns")
    for query in QUERIES[:10]:
        found = await index.query(query.tolist(), top_k=10, namespace="ns")
        assert len(found) == 10
        for match in found:
            number = int(match.id[1:])
            assert number % 2 == 1
            stored = -VECTORS[number] if number < 200 else VECTORS[number]
            assert match.score == pytest.approx(float(stored @ query), abs=1e-5)
    assert graph_searches
    await index.close()


async def test_records_not_in_the_graph_yet_are_found(graph_searches: list[int]) -> None:
    index = await large_index()
    fresh = clustered(50, seed=3)
    await index.upsert(corpus(fresh, prefix="new"), namespace="ns")
    for n in (0, 25, 49):
        found = await index.query(fresh[n].tolist(), top_k=1, namespace="ns")
        assert found[0].id == f"new{n}"
        assert found[0].score == pytest.approx(1.0, abs=1e-5)
    assert graph_searches
    await index.settle()
    await index.close()


async def test_a_compaction_rebuilds_the_graph_of_the_live_records() -> None:
    index = EmbeddedVectorIndex(ann_min_vectors=THRESHOLD, compact_min_changes=500)
    await index.upsert(corpus(), namespace="ns")
    await index.settle()
    size = (await index.footprint()).memory_bytes
    await index.delete(namespace="ns", ids=[f"r{n}" for n in range(1_100)])
    await index.settle()
    assert (await index.footprint()).memory_bytes < 0.6 * size
    found = await index.query(VECTORS[1_500].tolist(), top_k=1, namespace="ns")
    assert found[0].id == "r1500"


async def test_a_namespace_growing_by_new_records_builds_its_graph_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds: list[int] = []
    build = HnswAnnGraph.build.__func__  # type: ignore[attr-defined]

    def counted(cls: type[HnswAnnGraph], vectors: np.ndarray) -> HnswAnnGraph:
        builds.append(len(vectors))
        return build(cls, vectors)

    monkeypatch.setattr(HnswAnnGraph, "build", classmethod(counted))
    index = EmbeddedVectorIndex(tmp_path, ann_min_vectors=THRESHOLD, compact_min_changes=200)
    records = corpus()
    for start in range(0, SIZE, 250):
        await index.upsert(records[start : start + 250], namespace="ns")
        await index.settle()
    await index.close()
    assert builds == [THRESHOLD]
    assert len(list(tmp_path.glob("ns.*.log"))) == 1

    reopened = EmbeddedVectorIndex(tmp_path, ann_min_vectors=THRESHOLD, exact_subset_rows=200)
    assert await recall(reopened, None, np.ones(SIZE, dtype=bool)) >= 0.95
    await reopened.settle()
    await reopened.close()
    assert builds == [THRESHOLD]


async def test_the_graph_is_saved_and_found_again_at_start_up(
    tmp_path: Path, graph_searches: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    index = await large_index(tmp_path)
    await index.upsert(corpus(clustered(10, seed=4), prefix="late"), namespace="ns")
    await index.close()

    added: list[int] = []
    add = HnswAnnGraph.add

    def counted(self: HnswAnnGraph, vectors: np.ndarray) -> None:
        added.append(len(vectors))
        add(self, vectors)

    monkeypatch.setattr(HnswAnnGraph, "add", counted)
    reopened = EmbeddedVectorIndex(tmp_path, ann_min_vectors=THRESHOLD, exact_subset_rows=200)
    assert await recall(reopened, None, np.ones(SIZE, dtype=bool)) >= 0.95
    assert len(graph_searches) == len(QUERIES)
    await reopened.settle()
    assert sum(added) in (0, 10)
    await reopened.close()


async def test_a_graph_of_other_rows_is_not_used_but_built_again(
    tmp_path: Path, graph_searches: list[int]
) -> None:
    index = await large_index(tmp_path / "index")
    await index.close()
    other = EmbeddedVectorIndex(tmp_path / "other", ann_min_vectors=THRESHOLD)
    await other.upsert(corpus(clustered(SIZE, seed=5)), namespace="ns")
    await other.settle()
    await other.close()
    (tmp_path / "other" / "ns.hnsw").replace(tmp_path / "index" / "ns.hnsw")

    reopened = EmbeddedVectorIndex(tmp_path / "index", ann_min_vectors=THRESHOLD)
    assert await recall(reopened, None, np.ones(SIZE, dtype=bool)) == 1.0
    assert graph_searches == []
    await reopened.settle()
    assert await recall(reopened, None, np.ones(SIZE, dtype=bool)) >= 0.95
    assert len(graph_searches) == len(QUERIES)
    await reopened.close()


async def test_the_setting_sets_the_threshold_of_the_configured_index(
    tmp_path: Path, graph_searches: list[int]
) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path, index_ann_min_vectors=THRESHOLD)
    index = await resolve(Container(settings=settings).backend_index)
    await index.upsert(corpus(), namespace="ns")
    await index.settle()
    await index.query(QUERIES[0].tolist(), top_k=10, namespace="ns")
    assert graph_searches == [1]
    await index.close()
