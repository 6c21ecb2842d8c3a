"""The one protocol every retrieval stage implements, the state they pass on, and the runner."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from retrieval.domain.models import RetrievalMatch, RetrievalQuery


@dataclass(frozen=True)
class Candidate:
    """A chunk a search found, before its text is fetched."""

    chunk_id: str
    score: float
    """The score the ranking uses."""
    scores: Mapping[str, float]
    """The score from each source that found the chunk (``dense``: cosine similarity)."""


@dataclass(frozen=True)
class PipelineState:
    """What one retrieval knows so far; each stage returns a new state.

    ``namespace`` is the one searched: the query's, or the service's default. ``timings``
    (milliseconds) and ``counts`` (candidates left) are recorded by the ``Pipeline`` after each
    stage, under its name.
    """

    query: RetrievalQuery
    namespace: str
    text: str = ""
    """The query text the stages use: the query as asked until a stage processes it."""
    query_vector: tuple[float, ...] | None = None
    candidates: tuple[Candidate, ...] = ()
    matches: tuple[RetrievalMatch, ...] = ()
    timings: Mapping[str, float] = field(default_factory=dict)
    counts: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def start(cls, query: RetrievalQuery, namespace: str) -> PipelineState:
        return cls(query=query, namespace=namespace, text=query.query)


class Stage(Protocol):
    """One step of a retrieval. A stage that is switched off is one that returns its input."""

    @property
    def name(self) -> str:
        """Key of the stage's timing and candidate count in the result and the log."""
        ...

    async def run(self, state: PipelineState) -> PipelineState:
        """The state after this step; raising ends the retrieval with that error."""
        ...


class Pipeline:
    """Runs its stages in order, recording each one's duration and the candidates it leaves."""

    def __init__(self, stages: Sequence[Stage]) -> None:
        names = [stage.name for stage in stages]
        if len(set(names)) != len(names):
            raise ValueError(f"stage names must be distinct: {names}")
        self.stages = tuple(stages)

    async def run(self, state: PipelineState) -> PipelineState:
        for stage in self.stages:
            begun = time.perf_counter()
            state = await stage.run(state)
            elapsed_ms = (time.perf_counter() - begun) * 1e3
            state = replace(
                state,
                timings={**state.timings, stage.name: elapsed_ms},
                counts={**state.counts, stage.name: len(state.candidates)},
            )
        return state
