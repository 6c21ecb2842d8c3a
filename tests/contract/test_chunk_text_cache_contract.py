import pytest

from retrieval.service.caching.chunk_cache import ChunkTextCache
from retrieval.service.caching.freshness import NamespaceFreshness, NoIndexLsns
from retrieval_testkit import InMemoryChunkRepository
from retrieval_testkit.contracts import ChunkRepositoryContract
from retrieval_testkit.in_memory_namespace_generations import InMemoryNamespaceGenerations
from retrieval_testkit.telemetry import quiet_telemetry


class TestChunkTextCache(ChunkRepositoryContract):
    @pytest.fixture
    def repository(self) -> ChunkTextCache:
        return ChunkTextCache(
            InMemoryChunkRepository(),
            max_entries=100,
            metrics=quiet_telemetry().metrics,
            freshness=NamespaceFreshness(InMemoryNamespaceGenerations(), NoIndexLsns(), 0.0),
        )
