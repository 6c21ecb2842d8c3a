"""NamespaceGenerations in a dict; counts reads so tests can see what a cache costs."""

from __future__ import annotations

from retrieval.ports.namespace_generations import Generation


class InMemoryNamespaceGenerations:
    def __init__(self) -> None:
        self._generations: dict[str, Generation] = {}
        self.current_calls = 0

    async def current(self, namespace: str) -> Generation:
        self.current_calls += 1
        return self._generations.get(namespace, Generation(0, None))

    async def advance(self, namespace: str, index_lsn: int | None = None) -> int:
        known = self._generations.get(namespace, Generation(0, None))
        lsns = [lsn for lsn in (known.index_lsn, index_lsn) if lsn is not None]
        self._generations[namespace] = Generation(known.number + 1, max(lsns, default=None))
        return known.number + 1
