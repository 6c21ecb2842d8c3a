from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol

NO_LSNS: Mapping[str, int] = MappingProxyType({})


@dataclass(frozen=True)
class Generation:
    """A namespace's generation and how far each index must have indexed it."""

    number: int
    """0 for a namespace never advanced."""
    index_lsns: Mapping[str, int] = field(default_factory=dict)
    """Per index (by name), the highest log sequence number (LSN) it gave a write reported
    with an advance of the namespace (an index none was reported for is left out): an answer
    of that index at or above it reflects every such write to it."""


class NamespaceGenerations(Protocol):
    """A counter per namespace that every write moves forward, shared by every replica, with
    the index positions of the writes it counts.

    A cached answer is keyed on the generation read before it was computed, so advancing the
    generation after a write retires every answer computed before it (``InProcessResultCache``).
    A generation never goes back: the counter of a deleted namespace is kept, and so are its
    LSNs.
    """

    async def current(self, namespace: str) -> Generation:
        """The namespace's generation (``Generation(0)`` for a namespace never advanced). A
        read issued after an ``advance`` returned (on any replica) sees at least that
        advance's number and LSNs."""
        ...

    async def advance(self, namespace: str, index_lsns: Mapping[str, int] = NO_LSNS) -> int:
        """Add exactly 1, atomically (concurrent advances each count), raise the stored LSN of
        each index in ``index_lsns`` to the one given if that is higher (the others keep
        theirs), and return the new number. Index names hold no ``.`` and no ``$``."""
        ...
