"""NamespaceGenerations in a dict; counts reads so tests can see what a cache costs."""

from __future__ import annotations

from collections.abc import Mapping

from retrieval.ports.index_lsns import highest
from retrieval.ports.namespace_generations import NO_LSNS, Generation


class InMemoryNamespaceGenerations:
    def __init__(self) -> None:
        self._generations: dict[str, Generation] = {}
        self.current_calls = 0

    async def current(self, namespace: str) -> Generation:
        self.current_calls += 1
        return self._generations.get(namespace, Generation(0))

    async def advance(self, namespace: str, index_lsns: Mapping[str, int] = NO_LSNS) -> int:
        known = self._generations.get(namespace, Generation(0))
        self._generations[namespace] = Generation(
            known.number + 1, highest(known.index_lsns, index_lsns)
        )
        return known.number + 1
