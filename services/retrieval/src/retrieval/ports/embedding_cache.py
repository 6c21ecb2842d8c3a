from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from retrieval.ports.embedder import Vector


class EmbeddingCache(Protocol):
    """Vectors already computed, by key (``retrieval.domain.embedding_keys.embedding_key``).

    Every process using the same store shares the entries. A cache may forget any entry at
    any time (expiry, the size cap); it never returns a vector stored under another key.
    """

    async def get_many(self, keys: Sequence[str]) -> dict[str, Vector]:
        """The float32 vectors stored under these keys in one round trip per backend batch.

        Missing keys are absent from the result; a hit counts as a use.
        """
        ...

    async def put_many(self, entries: Mapping[str, Vector]) -> None:
        """Store or replace vectors by key; each counts as used now."""
        ...

    async def evict(self, max_entries: int) -> int:
        """Remove the least recently used entries until at most ``max_entries`` remain.

        Returns how many were removed.
        """
        ...
