from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence

import numpy as np

from retrieval.ports.embedder import Vector


class InMemoryEmbeddingCache:
    """An EmbeddingCache in an ordered dict, least recently used first; counts lookups."""

    def __init__(self) -> None:
        self._entries: OrderedDict[str, Vector] = OrderedDict()
        self.get_many_calls = 0

    async def get_many(self, keys: Sequence[str]) -> dict[str, Vector]:
        self.get_many_calls += 1
        found: dict[str, Vector] = {}
        for key in keys:
            if key in self._entries:
                self._entries.move_to_end(key)
                found[key] = self._entries[key].copy()
        return found

    async def put_many(self, entries: Mapping[str, Vector]) -> None:
        for key, vector in entries.items():
            self._entries[key] = np.array(vector, dtype=np.float32)
            self._entries.move_to_end(key)

    async def evict(self, max_entries: int) -> int:
        removed = 0
        while len(self._entries) > max(max_entries, 0):
            self._entries.popitem(last=False)
            removed += 1
        return removed
