"""The chunk text cache: a chunk read again is not read from the store again, within a bound;
a delete made through it is not served afterwards."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import pytest

from retrieval.domain.models import RagChunk
from retrieval.errors import BackendUnavailableError
from retrieval.observability.metrics import ServiceMetrics
from retrieval.ports.chunk_repository import ChunkRepository
from retrieval.service.caching.chunk_cache import ChunkTextCache
from retrieval.service.caching.freshness import NamespaceFreshness, NoIndexLsns
from retrieval_testkit import InMemoryChunkRepository
from retrieval_testkit.contracts.chunk_repository import chunk
from retrieval_testkit.in_memory_namespace_generations import InMemoryNamespaceGenerations
from retrieval_testkit.telemetry import quiet_telemetry

NS = "unit"
OTHER = "other"
IDS = ["doc-1#0", "doc-1#1", "doc-2#0"]


class UnreachableChunkRepository(InMemoryChunkRepository):
    """Refuses every read while ``down``."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False

    async def get_many(self, chunk_ids: Sequence[str], namespace: str) -> dict[str, RagChunk]:
        if self.down:
            raise BackendUnavailableError("chunk store is down")
        return await super().get_many(chunk_ids, namespace)


async def seeded_store() -> InMemoryChunkRepository:
    store = InMemoryChunkRepository()
    await store.upsert_many(
        [
            chunk("doc-1#0", namespace=NS, position=0),
            chunk("doc-1#1", namespace=NS, position=1),
            chunk("doc-2#0", document_id="doc-2", namespace=NS),
            chunk("doc-1#0", namespace=OTHER, content="other namespace"),
        ]
    )
    return store


def cache(
    store: ChunkRepository, max_entries: int = 100, metrics: ServiceMetrics | None = None
) -> ChunkTextCache:
    settled = NamespaceFreshness(InMemoryNamespaceGenerations(), NoIndexLsns(), 0.0)
    return ChunkTextCache(store, max_entries, metrics or quiet_telemetry().metrics, settled)


async def contents(texts: ChunkRepository, chunk_ids: list[str], namespace: str = NS) -> dict:
    return {c: chunk.content for c, chunk in (await texts.get_many(chunk_ids, namespace)).items()}


async def test_chunks_read_again_are_served_without_the_store() -> None:
    store = await seeded_store()
    texts = cache(store)
    first = await texts.get_many(IDS, NS)
    single = await texts.get_by_id("doc-1#0", OTHER)
    await store.delete_namespace(NS)
    await store.delete_namespace(OTHER)
    assert await texts.get_many(IDS, NS) == first
    assert await texts.get_by_id("doc-1#1", NS) == first["doc-1#1"]
    assert await texts.get_by_id("doc-1#0", OTHER) == single
    assert single is not None
    assert single.content == "other namespace"
    assert store.get_many_calls == 2, "the first read of each, and no other"


async def test_what_is_not_kept_is_read_in_one_get_many() -> None:
    store = await seeded_store()
    metrics = quiet_telemetry().metrics
    texts = cache(store, metrics=metrics)
    await texts.get_many(["doc-1#0"], NS)
    found = await contents(texts, ["doc-1#0", "doc-1#1", "doc-2#0", "missing"])
    assert found == {chunk_id: f"text of {chunk_id}" for chunk_id in IDS}
    assert store.get_many_calls == 2
    lookups = "retrieval_chunk_cache_lookups_total"
    assert metrics.registry.get_sample_value(lookups, {"result": "hit"}) == 1
    assert metrics.registry.get_sample_value(lookups, {"result": "miss"}) == 4


async def test_a_chunk_not_found_is_looked_for_again() -> None:
    store = InMemoryChunkRepository()
    texts = cache(store)
    assert await texts.get_many(["doc-1#0"], NS) == {}
    assert await texts.get_by_id("doc-1#0", NS) is None
    await store.upsert_many([chunk("doc-1#0", namespace=NS)])
    assert await contents(texts, ["doc-1#0"]) == {"doc-1#0": "text of doc-1#0"}
    assert await texts.get_by_id("doc-1#0", NS) is not None


async def test_the_least_recently_used_chunk_leaves_first() -> None:
    store = await seeded_store()
    texts = cache(store, max_entries=2)
    for chunk_id in ("doc-1#0", "doc-1#1", "doc-1#0", "doc-2#0"):
        await texts.get_many([chunk_id], NS)
    await store.delete_namespace(NS)
    assert set(await texts.get_many(IDS, NS)) == {"doc-1#0", "doc-2#0"}


async def test_one_read_of_more_chunks_than_the_bound_keeps_the_bound() -> None:
    store = await seeded_store()
    texts = cache(store, max_entries=2)
    await texts.get_many(IDS, NS)
    await store.delete_namespace(NS)
    assert len(await texts.get_many(IDS, NS)) == 2


@pytest.mark.parametrize(
    ("delete", "gone"),
    [
        (lambda texts: texts.delete_chunks(["doc-1#1", "missing"], NS), {"doc-1#1"}),
        (lambda texts: texts.delete_document("doc-1", NS), {"doc-1#0", "doc-1#1"}),
        (lambda texts: texts.delete_namespace(NS), set(IDS)),
    ],
    ids=["chunks", "document", "namespace"],
)
async def test_a_delete_through_the_cache_forgets_those_chunks_and_only_those(
    delete: Callable[[ChunkRepository], Awaitable[int]], gone: set[str]
) -> None:
    store = await seeded_store()
    texts = cache(store)
    await texts.get_many(IDS, NS)
    await texts.get_many(["doc-1#0"], OTHER)
    assert await delete(texts) == len(gone)
    await store.delete_namespace(NS)
    await store.delete_namespace(OTHER)
    assert set(await texts.get_many(IDS, NS)) == set(IDS) - gone
    assert await contents(texts, ["doc-1#0"], OTHER) == {"doc-1#0": "other namespace"}


async def test_a_write_through_the_cache_replaces_what_it_keeps() -> None:
    store = await seeded_store()
    texts = cache(store)
    await texts.get_many(["doc-2#0"], NS)
    await texts.upsert_many([chunk("doc-2#0", document_id="doc-2", namespace=NS, content="new")])
    assert await contents(texts, ["doc-2#0"]) == {"doc-2#0": "new"}


async def test_namespaces_keep_their_own_chunk_of_one_id() -> None:
    store = await seeded_store()
    texts = cache(store)
    assert await contents(texts, ["doc-1#0"], NS) == {"doc-1#0": "text of doc-1#0"}
    assert await contents(texts, ["doc-1#0"], OTHER) == {"doc-1#0": "other namespace"}
    await store.delete_namespace(NS)
    await store.delete_namespace(OTHER)
    assert await contents(texts, ["doc-1#0"], OTHER) == {"doc-1#0": "other namespace"}
    assert await contents(texts, ["doc-1#0"], NS) == {"doc-1#0": "text of doc-1#0"}


async def test_no_entries_means_no_cache() -> None:
    store = await seeded_store()
    metrics = quiet_telemetry().metrics
    texts = cache(store, max_entries=0, metrics=metrics)
    await texts.get_many(IDS, NS)
    await texts.get_by_id("doc-1#0", NS)
    await store.delete_namespace(NS)
    assert await texts.get_many(IDS, NS) == {}
    assert await texts.get_by_id("doc-1#0", NS) is None
    assert store.get_many_calls == 4, "every read goes to the store"
    lookups = "retrieval_chunk_cache_lookups_total"
    for result in ("hit", "miss"):
        assert metrics.registry.get_sample_value(lookups, {"result": result}) == 0


async def test_kept_chunks_are_served_while_the_store_is_down_and_others_fail() -> None:
    store = UnreachableChunkRepository()
    await store.upsert_many([chunk(chunk_id, namespace=NS) for chunk_id in IDS])
    texts = cache(store)
    await texts.get_many(IDS[:2], NS)
    store.down = True
    assert set(await texts.get_many(IDS[:2], NS)) == set(IDS[:2])
    with pytest.raises(BackendUnavailableError):
        await texts.get_many(IDS, NS)
    store.down = False
    assert set(await texts.get_many(IDS, NS)) == set(IDS)


def test_a_negative_bound_is_refused() -> None:
    with pytest.raises(ValueError, match="max_entries"):
        cache(InMemoryChunkRepository(), max_entries=-1)
