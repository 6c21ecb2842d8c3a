from __future__ import annotations

from typing import Protocol


class NamespaceGenerations(Protocol):
    """A counter per namespace that every write moves forward, shared by every replica.

    A cached answer is keyed on the generation read before it was computed, so advancing the
    generation after a write retires every answer computed before it (``InProcessResultCache``).
    A generation never goes back: the counter of a deleted namespace is kept.
    """

    async def current(self, namespace: str) -> int:
        """The namespace's generation: 0 for a namespace never advanced. A read issued after
        an ``advance`` returned (on any replica) sees at least that advance's value."""
        ...

    async def advance(self, namespace: str) -> int:
        """Add exactly 1, atomically (concurrent advances each count), and return the new value."""
        ...
