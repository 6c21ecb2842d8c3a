"""Telemetry for tests: metrics in a registry of their own, spans kept in memory or dropped."""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from prometheus_client import CollectorRegistry

from retrieval.observability.metrics import ServiceMetrics
from retrieval.observability.telemetry import Telemetry


def quiet_telemetry() -> Telemetry:
    """Counts into a fresh registry; traces nothing."""
    return Telemetry(ServiceMetrics(CollectorRegistry()), trace.NoOpTracer())


def tracer_into(exporter: InMemorySpanExporter) -> trace.Tracer:
    """A tracer whose every finished span lands in ``exporter`` at once."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer("retrieval-tests")


def recording_telemetry() -> tuple[Telemetry, InMemorySpanExporter]:
    """Counts into a fresh registry; every finished span lands in the exporter."""
    exporter = InMemorySpanExporter()
    return Telemetry(ServiceMetrics(CollectorRegistry()), tracer_into(exporter)), exporter
