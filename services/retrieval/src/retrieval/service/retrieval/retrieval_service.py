from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import structlog

from retrieval.domain.allowed_domains import check_domains
from retrieval.domain.models import (
    MatchStatistics,
    RetrievalOptions,
    RetrievalQuery,
    RetrievalResult,
    StageTimings,
)
from retrieval.domain.stage_names import StageName
from retrieval.errors import BackendNotConfiguredError
from retrieval.logging import correlation_scope
from retrieval.observability.round_trips import counting
from retrieval.observability.telemetry import Telemetry
from retrieval.service.caching.result_cache import ResultCache
from retrieval.service.retrieval.pipeline import Pipeline, PipelineState, SearchPlan, Stage
from retrieval.service.timing import StageClock

log = structlog.get_logger("retrieval")


@dataclass(eq=False)
class RetrievalService:
    """Finds the chunks that best answer a question, best first, by running its stages in
    order (the container builds the list: ``retrieval_stages``); ``defaults`` are the
    switches a request does not set; ``cache`` keeps results until their namespace is
    written (``InProcessResultCache``) or keeps none (``Uncached``); ``telemetry`` traces each
    call and stage and counts them."""

    stages: Sequence[Stage]
    allowed_domains: Collection[str]
    default_namespace: str
    defaults: SearchPlan
    cache: ResultCache
    telemetry: Telemetry
    _pipeline: Pipeline = field(init=False)

    def __post_init__(self) -> None:
        self._pipeline = Pipeline(self.stages, self.telemetry)

    async def retrieve(
        self,
        query: str,
        domains: Sequence[str] = (),
        top_k: int = 5,
        confidence_threshold: float = 0.0,
        namespace: str | None = None,
        options: RetrievalOptions | None = None,
        *,
        source_prefix: str | None = None,
        section: str | None = None,
    ) -> RetrievalResult:
        """``retrieve_query`` with the query's fields as arguments."""
        request = RetrievalQuery.checked(
            query,
            domains,
            top_k,
            confidence_threshold,
            namespace,
            options,
            source_prefix=source_prefix,
            section=section,
        )
        return await self.retrieve_query(request)

    async def retrieve_query(self, request: RetrievalQuery) -> RetrievalResult:
        """Search the query's domains (every domain when it names none) in its namespace (the
        service's default when it names none) by meaning and by keywords, fuse, diversify,
        return texts best first.

        Raises ``InvalidRequestError`` for bad input (a domain outside ``allowed_domains``
        when that allow-list is set), ``NotFoundError`` for a missing index or namespace,
        ``BackendError`` when a store fails. A blank query, or a backend without settings,
        gives an empty result.
        """
        began = time.monotonic()
        with correlation_scope(), self.telemetry.operation("retrieve") as span:
            check_domains(request.domains, self.allowed_domains)
            namespace = request.namespace or self.default_namespace
            round_trips: dict[str, int] = {}
            with counting(round_trips, StageName.CACHE):
                result = await self.cache.through(
                    request,
                    namespace,
                    lambda: self._retrieve(request, namespace, round_trips, began),
                )
            if result.timings.round_trips != round_trips:
                timings = result.timings.model_copy(update={"round_trips": dict(round_trips)})
                result = result.model_copy(update={"timings": timings})
            self.telemetry.retrieved(result, span)
            if result.cached:
                log.info("retrieve.cached", namespace=namespace, returned=result.total_matches)
            return result

    async def _retrieve(
        self, request: RetrievalQuery, namespace: str, round_trips: dict[str, int], began: float
    ) -> RetrievalResult:
        clock = StageClock(round_trips)
        state = PipelineState.start(request, namespace, self.defaults, began)
        if not state.text:
            log.info("retrieve.blank_query", namespace=state.namespace)
            return self._result(state, clock)
        try:
            state = await self._pipeline.run(state, clock)
        except BackendNotConfiguredError as error:
            log.warning("retrieve.backend_not_configured", reason=str(error))
            return self._result(state, clock)
        result = self._result(state, clock)
        log.info(
            "retrieve.done",
            namespace=state.namespace,
            domains=list(request.domains),
            top_k=request.top_k,
            mode=state.plan.mode.value,
            candidates=dict(state.counts),
            degraded=list(state.degraded),
            truncated=state.truncated,
            rewrites=len(state.rewrites),
            returned=result.total_matches,
            **{f"{stage}_ms": ms for stage, ms in result.timings.stages.items()},
            total_ms=result.timings.total_ms,
            round_trips=result.timings.round_trips,
        )
        return result

    @staticmethod
    def _result(state: PipelineState, clock: StageClock) -> RetrievalResult:
        """The result, built without validation: every field comes from a validated request,
        a validated chunk or the ranking's own numbers."""
        return RetrievalResult.model_construct(
            matches=state.matches,
            query=state.query.query,
            namespace=state.namespace,
            total_matches=len(state.matches),
            timings=StageTimings.model_construct(
                stages={**clock.stages, **state.timings},
                total_ms=clock.elapsed_ms(),
                round_trips=dict(clock.round_trips),
            ),
            query_truncated=state.truncated,
            degraded=state.degraded,
            cached=False,
            statistics=MatchStatistics.of([match.score for match in state.matches]),
            rewrites=state.rewrites,
            query_used=next(
                (r.query for r in reversed(state.rewrites) if r.error is None),
                state.text,
            ),
        )
