"""The one protocol every retrieval stage implements, the state they pass on, and the runner."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Protocol

from retrieval.domain.models import QueryRewrite, RagChunk, RetrievalMatch, RetrievalQuery
from retrieval.domain.query_text import normalise
from retrieval.domain.ranking.candidate import Candidate
from retrieval.domain.ranking.fusion import Ranked
from retrieval.domain.search_plan import SearchPlan
from retrieval.domain.stage_names import StageName
from retrieval.observability.telemetry import Telemetry
from retrieval.ports.chunk_repository import ChunkRepository
from retrieval.ports.embedder import Vector
from retrieval.service.timing import StageClock


@dataclass(frozen=True)
class PipelineState:
    """What one retrieval knows so far; each stage returns a new state.

    ``namespace`` is the one searched: the query's, or the service's default. ``counts``
    (candidates left) is recorded by the ``Pipeline`` after each stage, under its name,
    unless the stage recorded its own (``search``, which leaves its finds in ``sources``);
    ``timings`` holds the milliseconds of steps inside a stage (each search of ``search``).
    """

    query: RetrievalQuery
    namespace: str
    plan: SearchPlan
    text: str = ""
    """The query text the stages use: the query as asked, normalised and fitted to the model."""
    truncated: bool = False
    query_vector: Vector | None = field(default=None, compare=False)
    sources: Mapping[str, Ranked] = field(default_factory=dict)
    """What each search found, best first: the search's own matches, each an id and a score
    first. The ``search`` stage leaves no candidates; ``fuse`` makes them from these."""
    candidates: tuple[Candidate, ...] = ()
    vectors: Mapping[str, Vector] = field(default_factory=dict, compare=False)
    """Candidates' stored vectors, when a stage needs them."""
    degraded: tuple[str, ...] = ()
    chunks: Mapping[str, RagChunk] = field(default_factory=dict, compare=False)
    """Candidates' stored texts, once a stage has fetched them."""
    matches: tuple[RetrievalMatch, ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)
    timings: Mapping[str, float] = field(default_factory=dict)
    rewrites: tuple[QueryRewrite, ...] = ()
    began: float = field(default_factory=time.monotonic, compare=False)
    """When the call began (``time.monotonic``): what it reads of a namespace's generation
    must have been read since."""

    def updated(self, **changes: object) -> PipelineState:
        """This state with ``changes``, as ``dataclasses.replace`` makes it but without its
        field-by-field rebuild: 0.5 µs against 3.3, and a retrieval makes several."""
        unknown = changes.keys() - STATE_FIELDS
        if unknown:
            raise TypeError(f"PipelineState has no field {', '.join(sorted(unknown))}")
        state = object.__new__(PipelineState)
        state.__dict__.update(self.__dict__, **changes)
        return state

    @classmethod
    def start(
        cls,
        query: RetrievalQuery,
        namespace: str,
        defaults: SearchPlan,
        began: float | None = None,
    ) -> PipelineState:
        """The state a call that began at ``began`` (now when None) starts from."""
        return cls(
            query=query,
            namespace=namespace,
            plan=defaults.resolve(query.options),
            text=normalise(query.query),
            began=time.monotonic() if began is None else began,
        )


STATE_FIELDS = frozenset(field.name for field in fields(PipelineState))


async def with_texts(
    state: PipelineState, candidates: Sequence[Candidate], chunks: ChunkRepository
) -> dict[str, RagChunk]:
    """``state.chunks`` with the texts of ``candidates`` no stage has fetched yet, fetched in
    one ``get_many``; a chunk without a stored text stays absent."""
    missing = [c.chunk_id for c in candidates if c.chunk_id not in state.chunks]
    fetched = await chunks.get_many(missing, state.namespace) if missing else {}
    return {**state.chunks, **fetched}


class Stage(Protocol):
    """One step of a retrieval. A stage that is switched off is one that returns its input."""

    @property
    def name(self) -> StageName:
        """Key of the stage's timing and candidate count in the result and the log."""
        ...

    async def run(self, state: PipelineState) -> PipelineState:
        """The state after this step; raising ends the retrieval with that error."""
        ...


class Pipeline:
    """Runs its stages in order, timing each on the call's clock, tracing each in a span of
    its own and counting the candidates it leaves."""

    def __init__(self, stages: Sequence[Stage], telemetry: Telemetry) -> None:
        names = [stage.name for stage in stages]
        if len(set(names)) != len(names):
            raise ValueError(f"stage names must be distinct: {names}")
        self.stages = tuple(stages)
        self._telemetry = telemetry

    async def run(self, state: PipelineState, clock: StageClock) -> PipelineState:
        left: dict[str, int] = {}
        for stage in self.stages:
            with self._telemetry.stage(stage.name), clock.stage(stage.name):
                state = await stage.run(state)
            left[stage.name] = state.counts.get(stage.name, len(state.candidates))
        return state.updated(counts={**state.counts, **left})
