"""The namespace generations this replica read last, for what it keeps until the next write.

A retrieval that keeps a result reads its namespace's generation before computing (the result
cache's read, ``retrieval.service.caching.result_cache``). What a later step of the call keeps
from the stores it may key on the generation read last for the namespace, with the same
guarantee as the result cache: that generation was read before the step read the stores, and
generations only grow, so whatever is kept under ``g`` was read after the write that made
``g`` completed. A call sees a generation at least as new as its own read, never an older one.

A step that needs the generation of its call where no result cache read one asks
``read_since`` with the time the call began: any read sent since then answers as the call's
own would, since a write completed before the call began had advanced the generation before
that read was sent. So the last read serves it when it was sent since, a read under way when
it was, and otherwise a new read, which the calls that began before it share: with many
callers, a read for each call is one for many.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass, field

from retrieval.ports.namespace_generations import NO_LSNS, Generation, NamespaceGenerations

REMEMBERED_NAMESPACES = 10_000


@dataclass(frozen=True)
class Read:
    number: int
    """The highest generation number read."""
    sent: float
    """When the last read to answer was sent (on the ``clock``)."""


@dataclass(frozen=True)
class UnderWay:
    sent: float
    task: asyncio.Task[Generation]


@dataclass(frozen=True, eq=False)
class RememberedGenerations:
    """``generations``, remembering the last value read of each namespace
    (``remembered`` namespaces at most, least recently read forgotten first); ``clock`` is the
    one the calls' starts are taken on."""

    generations: NamespaceGenerations
    _: KW_ONLY
    remembered: int = REMEMBERED_NAMESPACES
    clock: Callable[[], float] = time.monotonic
    _read: OrderedDict[str, Read] = field(init=False, default_factory=OrderedDict)
    _under_way: dict[str, UnderWay] = field(init=False, default_factory=dict)

    async def current(self, namespace: str) -> Generation:
        """The namespace's generation; a failed read forgets the one read before, so that
        nothing is kept under it meanwhile."""
        sent = self.clock()
        try:
            generation = await self.generations.current(namespace)
        except BaseException:
            self._read.pop(namespace, None)
            raise
        before = self._read.get(namespace, Read(generation.number, sent))
        self._read[namespace] = Read(max(generation.number, before.number), max(sent, before.sent))
        self._read.move_to_end(namespace)
        while len(self._read) > self.remembered:
            self._read.popitem(last=False)
        return generation

    async def read_since(self, namespace: str, began: float) -> int:
        """The namespace's generation number from a read sent at or after ``began`` (on the
        ``clock``), as the module says; the errors of ``current``."""
        read = self._read.get(namespace)
        if read is not None and read.sent >= began:
            return read.number
        under_way = self._under_way.get(namespace)
        if under_way is None or under_way.sent < began:
            under_way = UnderWay(self.clock(), asyncio.ensure_future(self.current(namespace)))
            self._under_way[namespace] = under_way
            under_way.task.add_done_callback(lambda _: self._answered(namespace, under_way))
        return (await asyncio.shield(under_way.task)).number

    def _answered(self, namespace: str, read: UnderWay) -> None:
        if self._under_way.get(namespace) is read:
            del self._under_way[namespace]
        if not read.task.cancelled():
            read.task.exception()  # retrieved here when every caller sharing it was cancelled

    async def advance(self, namespace: str, index_lsns: Mapping[str, int] = NO_LSNS) -> int:
        return await self.generations.advance(namespace, index_lsns)

    def last_read(self, namespace: str) -> int | None:
        """The generation number read last for ``namespace``; None when none was, or the last read
        failed."""
        read = self._read.get(namespace)
        return None if read is None else read.number
