import pytest

from retrieval.service.caching_embedder import CachingEmbedder
from retrieval_testkit import HashEmbedder, InMemoryEmbeddingCache
from retrieval_testkit.contracts import EmbedderContract


class TestCachingEmbedder(EmbedderContract):
    @pytest.fixture
    def embedder(self) -> CachingEmbedder:
        return CachingEmbedder(HashEmbedder(), InMemoryEmbeddingCache(), max_entries=100)
