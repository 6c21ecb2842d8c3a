"""NamespaceGenerations in a dict; counts reads so tests can see what a cache costs."""

from __future__ import annotations


class InMemoryNamespaceGenerations:
    def __init__(self) -> None:
        self._generations: dict[str, int] = {}
        self.current_calls = 0

    async def current(self, namespace: str) -> int:
        self.current_calls += 1
        return self._generations.get(namespace, 0)

    async def advance(self, namespace: str) -> int:
        self._generations[namespace] = self._generations.get(namespace, 0) + 1
        return self._generations[namespace]
