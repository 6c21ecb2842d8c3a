from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from retrieval.domain.graph import Extraction


class ExtractionCache(Protocol):
    """Extractions already made, by key (``retrieval.service.caching.cached_knowledge``).

    Every process using the same store shares the entries. A cache may forget any entry at
    any time (expiry); it never returns an extraction stored under another key.
    """

    async def get_many(self, keys: Sequence[str]) -> dict[str, Extraction]:
        """The extractions stored under these keys (empty ones included); missing keys are
        absent from the result; a hit counts as a use."""
        ...

    async def put_many(self, entries: Mapping[str, Extraction]) -> None:
        """Store or replace extractions by key; each counts as used now."""
        ...
