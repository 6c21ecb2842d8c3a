"""What callers of several replicas saw, and which of their reads were stale.

Each write or deletion of a document is a ``Change`` timed from its call's start to its
answer; each read, what version of each document it showed. A read that started at ``t``
is stale when what it shows of a document was certainly replaced by a change acknowledged
more than ``bound_s`` before ``t``: a change that *started* after the shown one was
answered is certainly later. Concurrent changes may land in either order, so what either of
them wrote is fresh until a later one is acknowledged and the bound has passed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

ABSENT = None
"""What a read shows of a document it did not return."""


@dataclass(frozen=True)
class Change:
    """One call's write (``version``) or deletion (``version`` None) of one document."""

    document_id: str
    version: str | None
    started: float
    ended: float
    acknowledged: bool
    """False when the call failed: the change may or may not have been made."""


@dataclass(frozen=True)
class Read:
    """What one retrieve, started at ``started``, showed: versions by document."""

    started: float
    shown: Mapping[str, frozenset[str]]
    replica: int = 0
    """Which replica answered."""
    ended: float = float("inf")
    """When its answer came."""


def stale_documents(
    read: Read, changes: Mapping[str, Sequence[Change]], bound_s: float
) -> list[str]:
    """The documents of which ``read`` shows a version (or an absence) certainly replaced
    more than ``bound_s`` before it started."""
    return [
        document_id
        for document_id, history in changes.items()
        if any(
            replaced(history, version, read.started - bound_s)
            for version in read.shown.get(document_id) or {ABSENT}
        )
    ]


def replaced(history: Sequence[Change], version: str | None, known_by: float) -> bool:
    """Whether every change that could have left ``version`` was followed by a change
    acknowledged by ``known_by``. Before its first change a document is absent."""
    settled = [c for c in history if c.acknowledged and c.ended <= known_by]
    sources: Iterable[float] = [c.ended for c in history if c.version == version]
    if version is ABSENT:
        sources = [*sources, float("-inf")]
    return all(any(later.started > ended for later in settled) for ended in sources)
