"""Match statistics, what the telemetry counts and traces, and when traces are exported."""

from __future__ import annotations

import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.trace import StatusCode

from retrieval.domain.models import MatchStatistics
from retrieval.errors import BackendUnavailableError
from retrieval.observability.tracing import exports_traces
from retrieval_testkit.telemetry import recording_telemetry

SCORES = st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), max_size=50)


@given(SCORES)
def test_statistics_describe_the_scores(scores: list[float]) -> None:
    described = MatchStatistics.of(scores)
    assert described.matches == len(scores)
    if not scores:
        assert described == MatchStatistics()
        return
    assert described.min_score == min(scores)
    assert described.max_score == max(scores)
    assert described.mean_score == pytest.approx(statistics.fmean(scores), abs=1e-6)


def test_statistics_of_nothing_are_absent_not_zero() -> None:
    empty = MatchStatistics.of([])
    assert (empty.matches, empty.mean_score, empty.max_score, empty.min_score) == (
        0, None, None, None,
    )  # fmt: skip


def test_a_failed_operation_is_counted_by_error_type_and_its_span_marked() -> None:
    telemetry, spans = recording_telemetry()
    with telemetry.operation("retrieve"):
        pass
    with pytest.raises(BackendUnavailableError), telemetry.operation("retrieve"):
        raise BackendUnavailableError("mongo down")
    registry = telemetry.metrics.registry

    def sample(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name, labels)

    assert sample("retrieval_operations_total", operation="retrieve", outcome="ok") == 1
    assert sample("retrieval_operations_total", operation="retrieve", outcome="error") == 1
    assert (
        sample("retrieval_errors_total", operation="retrieve", error="BackendUnavailableError") == 1
    )
    failed = spans.get_finished_spans()[-1]
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.events[0].name == "exception"


def test_stage_spans_nest_in_the_operation() -> None:
    telemetry, spans = recording_telemetry()
    with telemetry.operation("retrieve"), telemetry.stage("search"), telemetry.stage("inner"):
        pass
    by_name = {span.name: span for span in spans.get_finished_spans()}
    assert by_name["stage.search"].parent.span_id == by_name["retrieval.retrieve"].context.span_id
    assert by_name["stage.inner"].parent.span_id == by_name["stage.search"].context.span_id


@pytest.mark.parametrize(
    ("environment", "exported"),
    [
        ({}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4317"}, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "  "}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_SDK_DISABLED": "true"},
         False),
    ],
)  # fmt: skip
def test_traces_are_exported_only_to_a_configured_endpoint(
    environment: dict[str, str], exported: bool
) -> None:
    assert exports_traces(environment) is exported
