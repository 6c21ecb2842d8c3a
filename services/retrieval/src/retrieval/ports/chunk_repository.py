from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol

from retrieval.domain.models import RagChunk


class ChunkRepository(Protocol):
    """Stores chunk texts, keyed by ``(namespace, chunk_id)``."""

    async def upsert_many(self, chunks: Sequence[RagChunk]) -> int:
        """Insert or replace chunks; returns how many were written."""
        ...

    async def get_many(self, chunk_ids: Sequence[str], namespace: str) -> dict[str, RagChunk]:
        """The chunks with these ids (missing ids are absent from the result) in ONE round trip,
        or a few one after another where the store matches a long list slowly
        (``MongoChunkRepository``'s ``read_batch``): never one per id."""
        ...

    async def get_by_id(self, chunk_id: str, namespace: str) -> RagChunk | None:
        """One chunk, or None."""
        ...

    async def chunk_ids(self, document_id: str, namespace: str) -> set[str]:
        """Ids of the chunks a document has now."""
        ...

    async def delete_chunks(self, chunk_ids: Sequence[str], namespace: str) -> int:
        """Delete these chunks; returns how many existed."""
        ...

    async def delete_document(self, document_id: str, namespace: str) -> int:
        """Delete every chunk of a document; returns how many existed."""
        ...

    async def delete_namespace(self, namespace: str) -> int:
        """Delete every chunk of a namespace; returns how many existed."""
        ...

    async def count(self, namespace: str | None = None) -> int:
        """Chunks in a namespace, or in all of them."""
        ...

    def list_chunks(self, namespace: str) -> AsyncIterator[list[tuple[str, str]]]:
        """``(chunk_id, document_id)`` of every chunk of the namespace, in non-empty pages.

        Ascending ``chunk_id`` order (code point order, as ``VectorIndex.list_ids``), so the
        two listings can be merged page by page. An unknown namespace yields nothing. Chunks
        written or deleted while the listing runs may or may not appear; every chunk present
        throughout appears exactly once.
        """
        ...
