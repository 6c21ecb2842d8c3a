"""Round trips to the stores, counted where the store clients send their requests, for the
stage of the call under way (``retrieval.service.timing.StageClock``)."""

from __future__ import annotations

from contextvars import ContextVar, Token

from retrieval.context_scope import unbind

_COUNTING: ContextVar[tuple[dict[str, int], str] | None] = ContextVar(
    "round_trips_of_stage", default=None
)
"""A call's round trips by stage, and the stage under way. Tasks started within a stage (the
searches, run side by side) inherit it."""


def counting(round_trips: dict[str, int], stage: str) -> Counting:
    """Counts the requests made within into ``round_trips``, under ``stage``."""
    return Counting(round_trips, stage)


class Counting:
    """``counting``'s context manager. A class rather than a generator: every stage of every
    retrieval enters one, and a generator's context manager costs several times as much."""

    __slots__ = ("_token", "_value")
    _token: Token[tuple[dict[str, int], str] | None]

    def __init__(self, round_trips: dict[str, int], stage: str) -> None:
        self._value = (round_trips, stage)

    def __enter__(self) -> None:
        self._token = _COUNTING.set(self._value)

    def __exit__(self, *_: object) -> None:
        unbind(_COUNTING, self._value, self._token)


def store_round_trip() -> None:
    """Counts one request sent to a store (a MongoDB command, a Pinecone call) for the stage
    under way; outside any stage it counts nowhere."""
    current = _COUNTING.get()
    if current is not None:
        round_trips, stage = current
        round_trips[stage] = round_trips.get(stage, 0) + 1
