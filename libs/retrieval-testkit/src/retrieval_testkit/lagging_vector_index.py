"""A vector index that shows writes late, as an eventually consistent one (Pinecone
serverless) does: every write is acknowledged at once and takes effect ``lag_s`` later, in
order; reads see only the writes whose time has come."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

from retrieval.domain.vectors import IndexStats, QueryMatch, VectorRecord
from retrieval.ports.vector_index import MetadataFilter
from retrieval_testkit.in_memory_vector_index import InMemoryVectorIndex

Write = Callable[[], Awaitable[object]]


class LaggingVectorIndex:
    def __init__(self, lag_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._shown = InMemoryVectorIndex()
        self._lag_s = lag_s
        self._clock = clock
        self._pending: deque[tuple[float, Write]] = deque()

    async def upsert(self, records: Sequence[VectorRecord], namespace: str) -> int:
        kept = list(records)
        self._later(lambda: self._shown.upsert(kept, namespace))
        return len(kept)

    async def delete(
        self,
        *,
        namespace: str,
        ids: Sequence[str] | None = None,
        filter: MetadataFilter | None = None,
        delete_all: bool = False,
    ) -> None:
        kept = None if ids is None else list(ids)
        self._later(
            lambda: self._shown.delete(
                namespace=namespace, ids=kept, filter=filter, delete_all=delete_all
            )
        )

    async def query(self, vector: Sequence[float], **options: object) -> list[QueryMatch]:
        await self._show_due()
        return await self._shown.query(vector, **options)  # type: ignore[arg-type]

    async def fetch(self, ids: Sequence[str], namespace: str) -> dict[str, VectorRecord]:
        await self._show_due()
        return await self._shown.fetch(ids, namespace)

    async def stats(self) -> IndexStats:
        await self._show_due()
        return await self._shown.stats()

    async def list_ids(
        self, namespace: str, *, prefix: str | None = None
    ) -> AsyncIterator[list[str]]:
        await self._show_due()
        async for page in self._shown.list_ids(namespace, prefix=prefix):
            yield page

    def _later(self, write: Write) -> None:
        self._pending.append((self._clock() + self._lag_s, write))

    async def _show_due(self) -> None:
        while self._pending and self._pending[0][0] <= self._clock():
            _, write = self._pending.popleft()
            await write()
