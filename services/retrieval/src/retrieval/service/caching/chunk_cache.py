"""A ChunkRepository that keeps the chunks read last in this process.

What is stored under ``(namespace, chunk_id)`` never changes: a chunk id is content-addressed
(``retrieval.domain.chunk_identity.chunk_id``: the document, the position, and a digest of the
text, title, domain, metadata and embedding model), and the namespace is the rest of the key.
A changed chunk is a new id, so a kept chunk never goes stale and replicas need not agree on
anything: each keeps its own least-recently-used entries, and serves and keeps none of a
namespace that is settling after a write (``retrieval.service.caching.freshness``): an index that
shows writes late may still return the id of a chunk just deleted or replaced, which the
repository no longer holds, and which this cache may still keep.

What a deleted chunk leaves: retrieval asks only for the texts of ids the vector and keyword
indexes have just returned (or, widening, ids the store has just listed for a document), and
``IngestionService`` removes a chunk's vector and keyword entry before its text
(``ChunkStores.remove``; ``delete_namespace`` empties both indexes, then the texts). Once the
indexes forget a chunk it is asked for no more, on any replica, though another replica may
still keep it; on Pinecone that takes the index's own freshness delay (no documented bound:
the namespace settles when the index's answers reach the write's LSN).
A delete made through this cache forgets the affected entries here, and so does a write (the
port's replace-on-upsert, kept even for ids that are not content-addressed), once the store has
answered or failed (a failed call may still have changed it; forgetting only costs a read).

A text not found is not kept: it is looked for again on the next read.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass, field

from prometheus_client import Counter

from retrieval.domain.chunk_identity import document_of
from retrieval.domain.models import RagChunk
from retrieval.observability.metrics import ServiceMetrics
from retrieval.ports.chunk_repository import ChunkRepository
from retrieval.service.caching.freshness import NamespaceFreshness

Key = tuple[str, str]
"""``(namespace, chunk_id)``."""


@dataclass(eq=False)
class ChunkTextCache:
    """Reads ``repository`` for what it does not keep (``max_entries`` chunks at most; 0 keeps
    none); everything else passes through."""

    repository: ChunkRepository
    max_entries: int
    metrics: ServiceMetrics
    freshness: NamespaceFreshness
    _chunks: OrderedDict[Key, RagChunk] = field(init=False, default_factory=OrderedDict)
    _hits: Counter = field(init=False)
    _misses: Counter = field(init=False)

    def __post_init__(self) -> None:
        if self.max_entries < 0:
            raise ValueError("max_entries must not be negative")
        lookups = self.metrics.chunk_cache_lookups
        self._hits = lookups.labels(result="hit")
        self._misses = lookups.labels(result="miss")

    async def get_many(self, chunk_ids: Sequence[str], namespace: str) -> dict[str, RagChunk]:
        """The kept chunks, and the others in one ``get_many`` of the repository; all of them
        from the repository, and none kept, while the namespace is settling."""
        if not self.max_entries or not self.freshness.settled(namespace):
            return await self.repository.get_many(chunk_ids, namespace)
        kept = self._chunks
        found: dict[str, RagChunk] = {}
        missing: list[str] = []
        for chunk_id in chunk_ids:
            key = (namespace, chunk_id)
            chunk = kept.get(key)
            if chunk is None:
                missing.append(chunk_id)
            else:
                kept.move_to_end(key)
                found[chunk_id] = chunk
        if found:
            self._hits.inc(len(found))
        if not missing:
            return found
        self._misses.inc(len(missing))
        found.update(await self._read(missing, namespace))
        return found

    async def _read(self, chunk_ids: Sequence[str], namespace: str) -> dict[str, RagChunk]:
        """These chunks from the repository, kept for later."""
        fetched = await self.repository.get_many(chunk_ids, namespace)
        for chunk_id, chunk in fetched.items():
            self._chunks[(namespace, chunk_id)] = chunk
        self._trim()
        return fetched

    async def get_by_id(self, chunk_id: str, namespace: str) -> RagChunk | None:
        return (await self.get_many([chunk_id], namespace)).get(chunk_id)

    async def upsert_many(self, chunks: Sequence[RagChunk]) -> int:
        try:
            return await self.repository.upsert_many(chunks)
        finally:
            self._forget([(chunk.namespace, chunk.chunk_id) for chunk in chunks])

    async def chunk_ids(self, document_id: str, namespace: str) -> set[str]:
        return await self.repository.chunk_ids(document_id, namespace)

    async def delete_chunks(self, chunk_ids: Sequence[str], namespace: str) -> int:
        try:
            return await self.repository.delete_chunks(chunk_ids, namespace)
        finally:
            self._forget([(namespace, chunk_id) for chunk_id in chunk_ids])

    async def delete_document(self, document_id: str, namespace: str) -> int:
        try:
            return await self.repository.delete_document(document_id, namespace)
        finally:
            owner = (namespace, document_id)
            self._forget([key for key in self._chunks if (key[0], document_of(key[1])) == owner])

    async def delete_namespace(self, namespace: str) -> int:
        try:
            return await self.repository.delete_namespace(namespace)
        finally:
            self._forget([key for key in self._chunks if key[0] == namespace])

    async def count(self, namespace: str | None = None) -> int:
        return await self.repository.count(namespace)

    def list_chunks(self, namespace: str) -> AsyncIterator[list[tuple[str, str]]]:
        return self.repository.list_chunks(namespace)

    def _trim(self) -> None:
        while len(self._chunks) > self.max_entries:
            self._chunks.popitem(last=False)

    def _forget(self, keys: Iterable[Key]) -> None:
        for key in keys:
            self._chunks.pop(key, None)
