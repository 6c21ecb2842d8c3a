import pytest

from retrieval.service.caching.caching_embedder import CachingEmbedder
from retrieval.service.caching.query_vector_cache import QueryVectorCache
from retrieval_testkit import HashEmbedder, InMemoryEmbeddingCache
from retrieval_testkit.contracts import EmbedderContract
from retrieval_testkit.telemetry import quiet_telemetry


class TestCachingEmbedder(EmbedderContract):
    @pytest.fixture
    def embedder(self) -> CachingEmbedder:
        return CachingEmbedder(HashEmbedder(), InMemoryEmbeddingCache(), max_entries=100)


class TestQueryVectorCache(EmbedderContract):
    @pytest.fixture
    def embedder(self) -> QueryVectorCache:
        return QueryVectorCache(HashEmbedder(), max_entries=100, metrics=quiet_telemetry().metrics)
