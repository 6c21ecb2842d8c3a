from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from retrieval.observability.round_trips import counting


class StageClock:
    """Milliseconds spent in named stages of one call, and the store round trips made in each
    (``retrieval.observability.round_trips``) into ``round_trips``, which other steps of the
    same call may share (the result cache's read of the generation)."""

    def __init__(self, round_trips: dict[str, int] | None = None) -> None:
        self.started = time.perf_counter()
        self.stages: dict[str, float] = {}
        self.round_trips: dict[str, int] = {} if round_trips is None else round_trips

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        begun = time.perf_counter()
        try:
            with counting(self.round_trips, name):
                yield
        finally:
            self.stages[name] = self.stages.get(name, 0.0) + (time.perf_counter() - begun) * 1e3

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.started) * 1e3
