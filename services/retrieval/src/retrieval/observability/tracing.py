"""OpenTelemetry tracing, exported over OTLP only when the standard ``OTEL_*`` variables
name an endpoint."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping

from opentelemetry import trace
from opentelemetry.sdk.environment_variables import (
    OTEL_EXPORTER_OTLP_ENDPOINT,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
    OTEL_SDK_DISABLED,
    OTEL_SERVICE_NAME,
)

INSTRUMENTATION_NAME = "retrieval"
DEFAULT_SERVICE_NAME = "retrieval-service"


def exports_traces(environment: Mapping[str, str]) -> bool:
    """True when an OTLP endpoint is configured and the SDK is not disabled."""
    if environment.get(OTEL_SDK_DISABLED, "").strip().lower() == "true":
        return False
    return any(
        environment.get(name, "").strip()
        for name in (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT)
    )


def tracer_from_environment() -> Iterator[trace.Tracer]:
    """A tracer that exports in batches over OTLP (``OTEL_EXPORTER_OTLP_*``, the service name
    from ``OTEL_SERVICE_NAME``), flushed at shutdown; a no-op tracer when nothing is configured.
    The global tracer provider is left alone. The SDK and its exporter load only when
    exporting."""
    if not exports_traces(os.environ):
        yield trace.NoOpTracer()
        return
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    name = os.environ.get(OTEL_SERVICE_NAME, "").strip() or DEFAULT_SERVICE_NAME
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    try:
        yield provider.get_tracer(INSTRUMENTATION_NAME)
    finally:
        provider.shutdown()
