"""The test doubles honour the same contracts as the real adapters."""

import pytest

from retrieval_testkit import HashEmbedder, InMemoryChunkRepository, InMemoryVectorIndex
from retrieval_testkit.contracts import (
    ChunkRepositoryContract,
    EmbedderContract,
    VectorIndexContract,
)


class TestInMemoryVectorIndex(VectorIndexContract):
    @pytest.fixture
    def index(self) -> InMemoryVectorIndex:
        return InMemoryVectorIndex()


class TestInMemoryChunkRepository(ChunkRepositoryContract):
    @pytest.fixture
    def repository(self) -> InMemoryChunkRepository:
        return InMemoryChunkRepository()


class TestHashEmbedder(EmbedderContract):
    @pytest.fixture
    def embedder(self) -> HashEmbedder:
        return HashEmbedder()
