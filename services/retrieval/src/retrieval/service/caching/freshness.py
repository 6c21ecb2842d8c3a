"""What this replica may keep while an index may not show the latest write yet.

An eventually consistent index (Pinecone serverless) shows a write some time after it was
acknowledged, with no documented bound. Until then a search may miss a new chunk or return a
deleted or replaced one. Computing such an answer is unavoidable (it is what the index says);
keeping it is not. While a namespace is settling:

- the result cache keeps no result (``InProcessResultCache``);
- the chunk text cache serves and keeps no text: texts are read from the chunk store, which is
  strongly consistent, so a chunk deleted there is not shown even while the index still returns
  its id, and a replaced one is shown in its current version (``CurrentVersions``).

When it is settled is learnt from the indexes' log sequence numbers (LSNs, ``IndexLsns``),
which each index (on Pinecone: the dense vector index and the sparse keyword index) numbers on
its own. The writer advances the namespace's generation after its writes with, per index, the
highest LSN that index gave them (``IndexedGenerations``); every replica reads the generation
at the start of each retrieval. The retrieval is settled when every index it asked answered
each of its queries in the namespace at or above the LSN stored for that index and at or above
the highest LSN of an answer of that index this replica already returned for the namespace: so
a replica never returns a result older than one it returned (monotonic reads), and nothing
older than the write once the answers of every index it asked reflect it. An index it did not
ask (a keyword-only or dense-only search) does not hold it back.

Only where there is no LSN to compare (an index that answers none, a generation advanced with
none for an index asked, a retrieval that asked no index) does time decide: a generation first
seen at ``t`` was advanced before ``t``, so past ``t + settle_s`` (the index's assumed
freshness bound) it is taken as settled. The embedded index shows a write once it returns
(``settle_s`` 0: always settled). A namespace this replica has not seen is settling.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import KW_ONLY, dataclass, field
from typing import TypeVar

from retrieval.context_scope import bound
from retrieval.ports.index_lsns import AnsweredLsns, IndexLsns, highest
from retrieval.ports.namespace_generations import NO_LSNS, Generation, NamespaceGenerations

REMEMBERED_NAMESPACES = 10_000
T = TypeVar("T")

READING: ContextVar[AnsweredLsns | None] = ContextVar("index_answers", default=None)


class NoIndexLsns:
    """The ``IndexLsns`` of an index that answers no LSN."""

    def written(self, namespace: str) -> Mapping[str, int]:
        return NO_LSNS

    @contextmanager
    def answering(self) -> Iterator[AnsweredLsns]:
        yield AnsweredLsns()


@dataclass(frozen=True, eq=False)
class IndexedGenerations:
    """``NamespaceGenerations`` whose advances carry the LSN of this process's index writes."""

    generations: NamespaceGenerations
    lsns: IndexLsns

    async def current(self, namespace: str) -> Generation:
        return await self.generations.current(namespace)

    async def advance(self, namespace: str, index_lsns: Mapping[str, int] = NO_LSNS) -> int:
        return await self.generations.advance(
            namespace, highest(self.lsns.written(namespace), index_lsns)
        )


@dataclass(frozen=True)
class Seen:
    generation: Generation
    since: float
    """When this replica first read the generation."""


@dataclass(frozen=True, eq=False)
class NamespaceFreshness:
    generations: NamespaceGenerations
    lsns: IndexLsns
    settle_s: float
    _: KW_ONLY
    clock: Callable[[], float] = time.monotonic
    remembered: int = REMEMBERED_NAMESPACES
    _seen: OrderedDict[str, Seen] = field(init=False, default_factory=OrderedDict)
    _returned: OrderedDict[str, dict[str, int]] = field(init=False, default_factory=OrderedDict)

    def __post_init__(self) -> None:
        if self.settle_s < 0:
            raise ValueError("settle_s must not be negative")

    async def current(self, namespace: str) -> int:
        """The namespace's generation number, read from the shared store (``BackendError``
        when it does not answer), noting it and when this replica first saw it."""
        generation = await self.generations.current(namespace)
        if self.settle_s:
            self._note(namespace, generation)
        return generation.number

    async def computed(self, namespace: str, compute: Callable[[], Awaitable[T]]) -> tuple[T, bool]:
        """``compute()``, and whether it was settled: computed on index answers that reflect
        every write of the generation read last, and none older than an answer already
        returned for the namespace, of every index it asked. An index that shows writes at
        once (``settle_s`` 0) is always settled: there is nothing to note."""
        if not self.settle_s:
            return await compute(), True
        with self._reading():
            result = await compute()
            settled = self.settled(namespace)
            answered = self._answered(namespace)
        returned = highest(self._returned.get(namespace, {}), answered)
        if returned:
            self._remember(self._returned, namespace, returned)
        return result, settled

    def settled(self, namespace: str) -> bool:
        """Whether the retrieval under way may keep and serve what it reads of the namespace
        (always, for an index that shows writes at once)."""
        if not self.settle_s:
            return True
        seen = self._seen.get(namespace)
        if seen is None:
            return False
        written = seen.generation.index_lsns
        returned = self._returned.get(namespace, {})
        answered = self._answered(namespace)
        compared = {
            index: lsn for index, lsn in answered.items() if lsn is not None and index in written
        }
        uncompared = not answered or len(compared) < len(answered)
        if uncompared and self.clock() - seen.since < self.settle_s:
            return False
        return all(
            lsn >= max(written[index], returned.get(index, 0)) for index, lsn in compared.items()
        )

    @contextmanager
    def _reading(self) -> Iterator[AnsweredLsns]:
        with self.lsns.answering() as answers, bound(READING, answers):
            yield answers

    def _answered(self, namespace: str) -> Mapping[str, int | None]:
        answers = READING.get()
        return NO_LSNS if answers is None else answers.lowest(namespace)

    def _note(self, namespace: str, generation: Generation) -> None:
        seen = self._seen.get(namespace)
        if seen is None or seen.generation != generation:
            seen = Seen(generation, self.clock())
        self._remember(self._seen, namespace, seen)

    def _remember(self, kept: OrderedDict, namespace: str, value: object) -> None:
        kept[namespace] = value
        kept.move_to_end(namespace)
        while len(kept) > self.remembered:
            kept.popitem(last=False)
