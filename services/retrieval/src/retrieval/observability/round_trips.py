"""Round trips to the stores, counted where the store clients send their requests, for the
stage of the call under way (``retrieval.service.timing.StageClock``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_COUNTING: ContextVar[tuple[dict[str, int], str] | None] = ContextVar(
    "round_trips_of_stage", default=None
)
"""A call's round trips by stage, and the stage under way. Tasks started within a stage (the
searches, run side by side) inherit it."""


@contextmanager
def counting(round_trips: dict[str, int], stage: str) -> Iterator[None]:
    """Counts the requests made within into ``round_trips``, under ``stage``."""
    token = _COUNTING.set((round_trips, stage))
    try:
        yield
    finally:
        _COUNTING.reset(token)


def store_round_trip() -> None:
    """Counts one request sent to a store (a MongoDB command, a Pinecone call) for the stage
    under way; outside any stage it counts nowhere."""
    current = _COUNTING.get()
    if current is not None:
        round_trips, stage = current
        round_trips[stage] = round_trips.get(stage, 0) + 1
