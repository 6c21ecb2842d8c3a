from __future__ import annotations

import time

from retrieval.observability.round_trips import counting


class StageClock:
    """Milliseconds spent in named stages of one call, and the store round trips made in each
    (``retrieval.observability.round_trips``) into ``round_trips``, which other steps of the
    same call may share (the result cache's read of the generation)."""

    def __init__(self, round_trips: dict[str, int] | None = None) -> None:
        self.started = time.perf_counter()
        self.stages: dict[str, float] = {}
        self.round_trips: dict[str, int] = {} if round_trips is None else round_trips

    def stage(self, name: str) -> StageTimer:
        """Times what runs within under ``name`` (added to what the stage took before), its
        round trips counted under ``name`` too."""
        return StageTimer(self, name)

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.started) * 1e3


class StageTimer:
    """``StageClock.stage``: a class rather than a generator, as a retrieval enters a dozen."""

    __slots__ = ("_begun", "_clock", "_counting", "_name")

    def __init__(self, clock: StageClock, name: str) -> None:
        self._clock = clock
        self._name = name
        self._counting = counting(clock.round_trips, name)
        self._begun = 0.0

    def __enter__(self) -> None:
        self._begun = time.perf_counter()
        self._counting.__enter__()

    def __exit__(self, *_: object) -> None:
        self._counting.__exit__()
        stages = self._clock.stages
        spent = (time.perf_counter() - self._begun) * 1e3
        stages[self._name] = stages.get(self._name, 0.0) + spent
