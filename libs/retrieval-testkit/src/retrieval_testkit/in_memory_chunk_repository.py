from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from retrieval.domain.models import RagChunk

PAGE_SIZE = 100


class InMemoryChunkRepository:
    """A ChunkRepository in a dict; counts calls to ``get_many`` to prove one round trip."""

    def __init__(self) -> None:
        self._chunks: dict[tuple[str, str], RagChunk] = {}
        self.get_many_calls = 0

    async def upsert_many(self, chunks: Sequence[RagChunk]) -> int:
        for chunk in chunks:
            self._chunks[(chunk.namespace, chunk.chunk_id)] = chunk
        return len(chunks)

    async def get_many(self, chunk_ids: Sequence[str], namespace: str) -> dict[str, RagChunk]:
        self.get_many_calls += 1
        keys = [(namespace, chunk_id) for chunk_id in chunk_ids]
        return {key[1]: self._chunks[key] for key in keys if key in self._chunks}

    async def get_by_id(self, chunk_id: str, namespace: str) -> RagChunk | None:
        return self._chunks.get((namespace, chunk_id))

    async def chunk_ids(self, document_id: str, namespace: str) -> set[str]:
        return {
            chunk.chunk_id
            for (ns, _), chunk in self._chunks.items()
            if ns == namespace and chunk.document_id == document_id
        }

    async def delete_chunks(self, chunk_ids: Sequence[str], namespace: str) -> int:
        removed = [self._chunks.pop((namespace, chunk_id), None) for chunk_id in set(chunk_ids)]
        return sum(chunk is not None for chunk in removed)

    async def delete_document(self, document_id: str, namespace: str) -> int:
        return await self.delete_chunks(
            list(await self.chunk_ids(document_id, namespace)), namespace
        )

    async def delete_namespace(self, namespace: str) -> int:
        keys = [key for key in self._chunks if key[0] == namespace]
        for key in keys:
            del self._chunks[key]
        return len(keys)

    async def count(self, namespace: str | None = None) -> int:
        return sum(namespace is None or key[0] == namespace for key in self._chunks)

    async def list_chunks(self, namespace: str) -> AsyncIterator[list[tuple[str, str]]]:
        listed = sorted(
            (chunk_id, chunk.document_id)
            for (ns, chunk_id), chunk in self._chunks.items()
            if ns == namespace
        )
        for start in range(0, len(listed), PAGE_SIZE):
            yield listed[start : start + PAGE_SIZE]
