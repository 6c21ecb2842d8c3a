from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Generation:
    """A namespace's generation and how far the vector index must have indexed it."""

    number: int
    """0 for a namespace never advanced."""
    index_lsn: int | None
    """The highest log sequence number (LSN) the vector index gave a write reported with an
    advance of the namespace (``None``: none was): an index answer at or above it reflects
    every such write."""


class NamespaceGenerations(Protocol):
    """A counter per namespace that every write moves forward, shared by every replica, with
    the index position of the writes it counts.

    A cached answer is keyed on the generation read before it was computed, so advancing the
    generation after a write retires every answer computed before it (``InProcessResultCache``).
    A generation never goes back: the counter of a deleted namespace is kept, and so is its LSN.
    """

    async def current(self, namespace: str) -> Generation:
        """The namespace's generation (``Generation(0, None)`` for a namespace never advanced).
        A read issued after an ``advance`` returned (on any replica) sees at least that
        advance's number and LSN."""
        ...

    async def advance(self, namespace: str, index_lsn: int | None = None) -> int:
        """Add exactly 1, atomically (concurrent advances each count), raise the stored LSN
        to ``index_lsn`` if that is higher (``None`` leaves it), and return the new number."""
        ...
