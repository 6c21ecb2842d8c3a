from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from retrieval.adapters.embedded_index.vector_index import EmbeddedVectorIndex
from retrieval.domain.vectors import VectorRecord
from retrieval_testkit.contracts import VectorIndexContract


class Settled:
    """The index, waiting after every write until its compaction and graph are done, so the
    queries that follow go through the HNSW graph."""

    def __init__(self, index: EmbeddedVectorIndex) -> None:
        self.index = index

    def __getattr__(self, name: str) -> Any:
        return getattr(self.index, name)

    async def upsert(self, records: Sequence[VectorRecord], namespace: str) -> int:
        written = await self.index.upsert(records, namespace)
        await self.index.settle()
        return written

    async def delete(self, **selector: Any) -> None:
        await self.index.delete(**selector)
        await self.index.settle()


class TestEmbeddedVectorIndexInMemory(VectorIndexContract):
    @pytest.fixture
    def index(self) -> EmbeddedVectorIndex:
        return EmbeddedVectorIndex()


class TestEmbeddedVectorIndexOnDisk(VectorIndexContract):
    @pytest.fixture
    async def index(self, tmp_path: Path) -> AsyncIterator[EmbeddedVectorIndex]:
        index = EmbeddedVectorIndex(tmp_path / "index")
        yield index
        await index.close()


class TestEmbeddedVectorIndexThroughTheGraph(VectorIndexContract):
    """Every namespace large enough for a graph, every filter answered through it."""

    @pytest.fixture(params=["memory", "disk"])
    async def index(self, request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator:
        path = tmp_path / "index" if request.param == "disk" else None
        index = EmbeddedVectorIndex(path, ann_min_vectors=1, exact_subset_rows=0)
        yield Settled(index)
        await index.close()
