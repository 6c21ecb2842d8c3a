"""What this replica may keep while an index may not show the latest write yet.

An eventually consistent index (Pinecone serverless) shows a write some time after it was
acknowledged, with no documented bound. Until then a search may miss a new chunk or return a
deleted or replaced one. Computing such an answer is unavoidable (it is what the index says);
keeping it is not. While a namespace is settling:

- the result cache keeps no result (``InProcessResultCache``);
- the chunk text cache serves and keeps no text: texts are read from the chunk store, which is
  strongly consistent, so a chunk deleted there is not shown even while the index still returns
  its id, and a replaced one is shown in its current version (``CurrentVersions``).

When it is settled is learnt from the index's log sequence numbers (LSNs, ``IndexLsns``). The
writer advances the namespace's generation after its writes with the highest LSN the index gave
them (``IndexedGenerations``); every replica reads both at the start of each retrieval. The
retrieval is settled when every answer the index gave its queries in the namespace is at or
above that LSN and at or above the highest LSN of an answer this replica already returned for
the namespace: so a replica never returns a result older than one it returned (monotonic
reads), and nothing older than the write once its answers reflect it.

Only where there is no LSN to compare (an index that answers none, a generation advanced with
none, a retrieval that asked the index nothing) does time decide: a generation first seen at
``t`` was advanced before ``t``, so past ``t + settle_s`` (the index's assumed freshness bound)
it is taken as settled. The embedded index shows a write once it returns (``settle_s`` 0:
always settled). A namespace this replica has not seen is settling.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TypeVar

from retrieval.ports.index_lsns import AnsweredLsns, IndexLsns
from retrieval.ports.namespace_generations import Generation, NamespaceGenerations

REMEMBERED_NAMESPACES = 10_000
T = TypeVar("T")

READING: ContextVar[AnsweredLsns | None] = ContextVar("index_answers", default=None)


class NoIndexLsns:
    """The ``IndexLsns`` of an index that answers no LSN."""

    def written(self, namespace: str) -> int | None:
        return None

    @contextmanager
    def answering(self) -> Iterator[AnsweredLsns]:
        yield AnsweredLsns()


class IndexedGenerations:
    """``NamespaceGenerations`` whose advances carry the LSN of this process's index writes."""

    def __init__(self, generations: NamespaceGenerations, lsns: IndexLsns) -> None:
        self._generations = generations
        self._lsns = lsns

    async def current(self, namespace: str) -> Generation:
        return await self._generations.current(namespace)

    async def advance(self, namespace: str, index_lsn: int | None = None) -> int:
        known = [lsn for lsn in (index_lsn, self._lsns.written(namespace)) if lsn is not None]
        return await self._generations.advance(namespace, max(known, default=None))


@dataclass(frozen=True)
class Seen:
    generation: Generation
    since: float
    """When this replica first read the generation."""


class NamespaceFreshness:
    def __init__(
        self,
        generations: NamespaceGenerations,
        lsns: IndexLsns,
        settle_s: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        remembered: int = REMEMBERED_NAMESPACES,
    ) -> None:
        if settle_s < 0:
            raise ValueError("settle_s must not be negative")
        self._generations = generations
        self._lsns = lsns
        self._settle_s = settle_s
        self._clock = clock
        self._remembered = remembered
        self._seen: OrderedDict[str, Seen] = OrderedDict()
        self._returned: OrderedDict[str, int] = OrderedDict()

    @property
    def settle_s(self) -> float:
        return self._settle_s

    async def current(self, namespace: str) -> int:
        """The namespace's generation number, read from the shared store (``BackendError``
        when it does not answer), noting it and when this replica first saw it."""
        generation = await self._generations.current(namespace)
        if self._settle_s:
            self._note(namespace, generation)
        return generation.number

    async def computed(self, namespace: str, compute: Callable[[], Awaitable[T]]) -> tuple[T, bool]:
        """``compute()``, and whether it was settled: computed on index answers that reflect
        every write of the generation read last, and none older than an answer already
        returned for the namespace."""
        with self._reading():
            result = await compute()
            settled = self.settled(namespace)
            answered = self._answered(namespace)
        if answered is not None:
            self._remember(self._returned, namespace, max(answered, self._returned_lsn(namespace)))
        return result, settled

    def settled(self, namespace: str) -> bool:
        """Whether the retrieval under way may keep and serve what it reads of the namespace
        (always, for an index that shows writes at once)."""
        if not self._settle_s:
            return True
        seen = self._seen.get(namespace)
        if seen is None:
            return False
        written = seen.generation.index_lsn
        answered = self._answered(namespace)
        if written is not None and answered is not None:
            return answered >= max(written, self._returned_lsn(namespace))
        return self._clock() - seen.since >= self._settle_s

    @contextmanager
    def _reading(self) -> Iterator[AnsweredLsns]:
        with self._lsns.answering() as answers:
            READING.set(answers)
            try:
                yield answers
            finally:
                READING.set(None)

    def _answered(self, namespace: str) -> int | None:
        answers = READING.get()
        return None if answers is None else answers.lowest(namespace)

    def _returned_lsn(self, namespace: str) -> int:
        return self._returned.get(namespace, 0)

    def _note(self, namespace: str, generation: Generation) -> None:
        seen = self._seen.get(namespace)
        if seen is None or seen.generation != generation:
            seen = Seen(generation, self._clock())
        self._remember(self._seen, namespace, seen)

    def _remember(self, kept: OrderedDict, namespace: str, value: object) -> None:
        kept[namespace] = value
        kept.move_to_end(namespace)
        while len(kept) > self._remembered:
            kept.popitem(last=False)
