"""The test doubles honour the same contracts as the real adapters."""

import numpy as np
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


async def test_hashed_words_that_cancel_out_still_give_a_unit_vector() -> None:
    """As a model's would: "w153" hashes to the passage role's slot with the opposite sign,
    "w108" to the query role's."""
    embedder = HashEmbedder()
    passage = (await embedder.embed_passages(["w153"]))[0]
    query = await embedder.embed_query("w108")
    assert float(np.linalg.norm(passage)) == pytest.approx(1.0)
    assert float(np.linalg.norm(query)) == pytest.approx(1.0)
