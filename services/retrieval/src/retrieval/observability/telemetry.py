"""What the services record of each call: a span per call and per stage, and the metrics."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, TypeVar

from opentelemetry import trace
from opentelemetry.trace import INVALID_SPAN, Span
from prometheus_client.metrics import MetricWrapperBase

from retrieval.domain.models import DENSE, RetrievalResult
from retrieval.logging import current_correlation_id
from retrieval.observability.metrics import ServiceMetrics

CORRELATION_ID_ATTRIBUTE = "retrieval.correlation_id"
NO_SPAN = nullcontext()
M = TypeVar("M", bound=MetricWrapperBase)


class Telemetry:
    """Spans through ``tracer`` (a no-op one when tracing is not configured) and Prometheus
    ``metrics``; the correlation id of the call goes on every span."""

    def __init__(self, metrics: ServiceMetrics, tracer: trace.Tracer) -> None:
        self.metrics = metrics
        self._tracer = tracer
        self._traces = not isinstance(tracer, trace.NoOpTracer)
        self._children: dict[tuple[MetricWrapperBase, tuple[str, ...]], Any] = {}

    @contextmanager
    def span(self, name: str) -> Iterator[Span]:
        """A span, a child of the current one, carrying the call's correlation id; an error
        raised inside it is recorded on it. With a no-op tracer, the invalid span, which
        records nothing, without making the current context a new one."""
        if not self._traces:
            yield INVALID_SPAN
            return
        with self._tracer.start_as_current_span(name) as span:
            span.set_attribute(CORRELATION_ID_ATTRIBUTE, current_correlation_id() or "")
            yield span

    @contextmanager
    def operation(self, name: str) -> Iterator[Span]:
        """The span of one service call, counted by outcome; a call that raises is counted
        by error type too."""
        with self.span(f"retrieval.{name}") as span:
            try:
                yield span
            except BaseException as error:
                self.labelled(self.metrics.errors, name, type(error).__name__).inc()
                self.labelled(self.metrics.operations, name, "error").inc()
                raise
            self.labelled(self.metrics.operations, name, "ok").inc()

    def labelled(self, metric: M, *labels: str) -> M:
        """``metric.labels(*labels)`` (in the metric's label order), looked up once: a
        labelled lookup takes a lock each time, and every call makes several."""
        key = (metric, labels)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*labels)
        return child

    def stage(self, name: str) -> AbstractContextManager[object]:
        """The span of one pipeline stage, a child of the call's; nothing at all when the
        tracer is a no-op one (a dozen stages a call, where every microsecond shows)."""
        return self.span(f"stage.{name}") if self._traces else NO_SPAN

    def retrieved(self, result: RetrievalResult, span: Span) -> None:
        """Record what a retrieval returned (on its span too), whether the cache served it,
        and the time of each stage and search the result reports (only ``cache`` for one the
        cache served)."""
        self.labelled(self.metrics.cache_lookups, "hit" if result.cached else "miss").inc()
        self.metrics.matches.observe(result.total_matches)
        cosines = [match.scores[DENSE] for match in result.matches if DENSE in match.scores]
        if cosines:
            self.metrics.top_cosine.observe(max(cosines))
        for stage, ms in result.timings.stages.items():
            self.labelled(self.metrics.stage_duration, stage).observe(ms / 1e3)
        span.set_attribute("retrieval.namespace", result.namespace)
        span.set_attribute("retrieval.matches", result.total_matches)
        span.set_attribute("retrieval.cached", result.cached)
        if result.degraded:
            span.set_attribute("retrieval.degraded", list(result.degraded))
