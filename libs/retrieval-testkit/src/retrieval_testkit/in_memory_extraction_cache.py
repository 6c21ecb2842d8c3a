from __future__ import annotations

from collections.abc import Mapping, Sequence

from retrieval.domain.graph import Extraction


class InMemoryExtractionCache:
    """An ExtractionCache in a dict; counts lookups."""

    def __init__(self) -> None:
        self._entries: dict[str, Extraction] = {}
        self.get_many_calls = 0

    async def get_many(self, keys: Sequence[str]) -> dict[str, Extraction]:
        self.get_many_calls += 1
        return {key: self._entries[key] for key in keys if key in self._entries}

    async def put_many(self, entries: Mapping[str, Extraction]) -> None:
        self._entries.update(entries)
