"""The namespace generations this replica read last, for what it keeps until the next write.

Every retrieval reads its namespace's generation before computing (the result cache's read,
``retrieval.service.caching.result_cache``). What a later step of the call keeps from the
stores it may key on the generation read last for the namespace, with the same guarantee as
the result cache: that generation was read before the step read the stores, and generations
only grow, so whatever is kept under ``g`` was read after the write that made ``g``
completed. A call sees a generation at least as new as its own read, never an older one.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping

from retrieval.ports.namespace_generations import NO_LSNS, Generation, NamespaceGenerations

REMEMBERED_NAMESPACES = 10_000


class RememberedGenerations:
    """``generations``, remembering the last value read of each namespace
    (``remembered`` namespaces at most, least recently read forgotten first)."""

    def __init__(
        self, generations: NamespaceGenerations, *, remembered: int = REMEMBERED_NAMESPACES
    ) -> None:
        self._generations = generations
        self._remembered = remembered
        self._read: OrderedDict[str, int] = OrderedDict()

    async def current(self, namespace: str) -> Generation:
        """The namespace's generation; a failed read forgets the one read before, so that
        nothing is kept under it meanwhile."""
        try:
            generation = await self._generations.current(namespace)
        except BaseException:
            self._read.pop(namespace, None)
            raise
        number = generation.number
        self._read[namespace] = max(number, self._read.get(namespace, number))
        self._read.move_to_end(namespace)
        while len(self._read) > self._remembered:
            self._read.popitem(last=False)
        return generation

    async def advance(self, namespace: str, index_lsns: Mapping[str, int] = NO_LSNS) -> int:
        return await self._generations.advance(namespace, index_lsns)

    def last_read(self, namespace: str) -> int | None:
        """The generation number read last for ``namespace``; None when none was, or the last read
        failed."""
        return self._read.get(namespace)
