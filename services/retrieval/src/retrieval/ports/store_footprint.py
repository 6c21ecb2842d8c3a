from __future__ import annotations

from typing import Protocol

from retrieval.domain.collection_health import Footprint


class StoreFootprint(Protocol):
    """A store that lives on this machine (an embedded one) and can say what it occupies."""

    async def footprint(self) -> Footprint:
        """Bytes on disk and in memory now; None for what the store cannot measure."""
        ...
