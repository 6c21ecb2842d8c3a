"""What this replica may keep while an index may not show the latest write yet.

An eventually consistent index (Pinecone serverless) shows a write some time after it was
acknowledged: up to ``settle_s``, the index's freshness bound (0 for the embedded index, which
shows a write once it returns). Until then a search may miss a new chunk or return a deleted
one. Computing such an answer is unavoidable (it is what the index says); keeping it is not:

- the result cache keeps no result computed while the namespace is settling, so a stale
  answer is never served after the index caught up (``InProcessResultCache``);
- the chunk text cache serves no kept text of a settling namespace: texts are read from the
  chunk store, which is strongly consistent, so a chunk deleted there is not shown even while
  the index still returns its id (``ChunkTextCache``).

Each replica learns a namespace's generation (``NamespaceGenerations``, advanced by every
write after it changed the stores) by reading it at the start of each retrieval. A generation
first seen at ``t`` was advanced before ``t``, so once ``t + settle_s`` has passed the write
that made it is visible in the index: the namespace is settled. No clock is shared between
replicas. A namespace this replica has not seen is taken as settling.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from retrieval.ports.namespace_generations import NamespaceGenerations

REMEMBERED_NAMESPACES = 10_000


class NamespaceFreshness:
    def __init__(
        self,
        generations: NamespaceGenerations,
        settle_s: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        remembered: int = REMEMBERED_NAMESPACES,
    ) -> None:
        if settle_s < 0:
            raise ValueError("settle_s must not be negative")
        self._generations = generations
        self._settle_s = settle_s
        self._clock = clock
        self._remembered = remembered
        self._seen: OrderedDict[str, tuple[int, float]] = OrderedDict()

    @property
    def settle_s(self) -> float:
        return self._settle_s

    async def current(self, namespace: str) -> int:
        """The namespace's generation, read from the shared store (``BackendError`` when it
        does not answer), noting when this replica first saw it."""
        generation = await self._generations.current(namespace)
        if self._settle_s:
            self._note(namespace, generation)
        return generation

    def settled(self, namespace: str) -> bool:
        """Whether every write this replica has seen in the namespace is visible in the
        index by now (always, for an index that shows writes at once)."""
        if not self._settle_s:
            return True
        seen = self._seen.get(namespace)
        return seen is not None and self._clock() - seen[1] >= self._settle_s

    def _note(self, namespace: str, generation: int) -> None:
        seen = self._seen.get(namespace)
        if seen is None or seen[0] != generation:
            self._seen[namespace] = (generation, self._clock())
        self._seen.move_to_end(namespace)
        while len(self._seen) > self._remembered:
            self._seen.popitem(last=False)
