"""The gRPC server: build and bind it, report health, serve until a signal, drain."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import grpc
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from retrieval.domain.tenants import Tenants
from retrieval.grpc.access import check_exposure, load_tenants
from retrieval.grpc.admission import InFlightLimitInterceptor
from retrieval.grpc.channels import message_size_options
from retrieval.grpc.draining import CallsInFlight, stopped_when_idle
from retrieval.grpc.health import HealthMonitor, Publish
from retrieval.grpc.interceptors import CorrelationIdInterceptor, TelemetryInterceptor
from retrieval.grpc.servicer import RetrievalServicer
from retrieval.grpc.serving_record import ServingRecord, local_address, recorded
from retrieval.grpc.settings import GrpcSettings
from retrieval.grpc.tenancy import TokenInterceptor
from retrieval.grpc.write_repair import WriteRepair
from retrieval.lifecycle import Application
from retrieval.observability.metrics import ServiceMetrics
from retrieval.observability.metrics_endpoint import metrics_endpoint
from retrieval.observability.telemetry import Telemetry
from retrieval_proto.retrieval.v1 import retrieval_pb2, retrieval_pb2_grpc

log = structlog.get_logger("grpc")

SERVICE_NAME = retrieval_pb2.DESCRIPTOR.services_by_name["RetrievalService"].full_name
HEALTH_SERVICES = ("", SERVICE_NAME)
"""Say whether the service can answer: SERVING only while its stores answer."""
LIVENESS_SERVICE = "liveness"
"""Says the process answers at all: SERVING from the start, whatever the stores do, so a
liveness probe restarts a stuck process, not every replica during a store outage."""
UNDO_S = 5.0
"""How long calls cancelled at the end of the grace period get to undo what they began (an
ingestion removing the chunks of a write it had not committed) before the stores close."""


def server_credentials(settings: GrpcSettings) -> grpc.ServerCredentials | None:
    """TLS from the configured PEM files (mutual TLS when a client CA is given), or None."""
    if settings.tls_cert_file is None or settings.tls_key_file is None:
        return None
    client_ca = settings.tls_client_ca_file
    return grpc.ssl_server_credentials(
        [(settings.tls_key_file.read_bytes(), settings.tls_cert_file.read_bytes())],
        root_certificates=client_ca.read_bytes() if client_ca else None,
        require_client_auth=client_ca is not None,
    )


def interceptors(
    telemetry: Telemetry,
    tenants: Tenants | None,
    default_namespace: str,
    max_in_flight: int,
    write_repair: WriteRepair,
    calls: CallsInFlight | None = None,
) -> list[grpc.aio.ServerInterceptor]:
    """Outermost first: the correlation id, metrics and span also cover calls that the
    in-flight limit or auth refuse; ``write_repair`` sees only the calls they let through.
    Without ``tenants`` every call is served; with ``calls`` every call is tracked there."""
    chain: list[grpc.aio.ServerInterceptor] = [] if calls is None else [calls]
    chain += [
        CorrelationIdInterceptor(),
        TelemetryInterceptor(telemetry),
        InFlightLimitInterceptor(max_in_flight, telemetry.metrics, exempt=(health.SERVICE_NAME,)),
    ]
    if tenants is not None:
        chain.append(TokenInterceptor(tenants, SERVICE_NAME, default_namespace))
    return [*chain, write_repair]


async def set_health(
    servicer: health.aio.HealthServicer, status: health_pb2.HealthCheckResponse.ServingStatus
) -> None:
    for service in HEALTH_SERVICES:
        await servicer.set(service, status)


def health_publisher(servicer: health.aio.HealthServicer, metrics: ServiceMetrics) -> Publish:
    """Publishes a serving status to the health service and to the ``store_up`` gauge."""

    async def publish(status: health_pb2.HealthCheckResponse.ServingStatus) -> None:
        metrics.store_up.set(1 if status == health_pb2.HealthCheckResponse.SERVING else 0)
        await set_health(servicer, status)

    return publish


async def create_server(
    application: Application,
    address: str,
    settings: GrpcSettings,
    calls: CallsInFlight | None = None,
) -> tuple[grpc.aio.Server, int]:
    """Build, bind and start a server on ``address`` (port 0 picks one); return it and its port.
    With ``calls``, the calls it answers are tracked there.

    Health says NOT_SERVING until both stores have answered, then SERVING. When they do not
    answer, the server is stopped and their error raised. Until the server stops, a
    ``HealthMonitor`` probes them again every ``RETRIEVAL_HEALTH_INTERVAL_S`` and, while they
    answer, has what failed writes left repaired (``retrieval.grpc.write_repair``). Before
    anything, the tokens are loaded (``TokensFileError``) and a server without tokens is
    refused beyond loopback (``ConfigurationError``, see ``retrieval.grpc.access``).
    """
    tenants = load_tenants(settings)
    check_exposure(address, tenants is not None, settings.allow_unauthenticated)
    write_repair = WriteRepair(application.repair, application.settings.default_namespace)
    server = grpc.aio.server(
        interceptors=interceptors(
            application.telemetry,
            tenants,
            application.settings.default_namespace,
            settings.max_in_flight,
            write_repair,
            calls,
        ),
        options=[*message_size_options(settings.max_message_bytes), ("grpc.so_reuseport", 0)],
    )
    retrieval_pb2_grpc.add_RetrievalServiceServicer_to_server(
        RetrievalServicer(
            application.retrieval,
            application.ingestion,
            application.library,
            application.sync,
            application.stats,
            application.answers,
            application.validation,
            application.backups,
            application.settings.data_dir / "scratch",
            settings.max_documents_per_call,
        ),
        server,
    )
    health_servicer = health.aio.HealthServicer()
    publish = health_publisher(health_servicer, application.telemetry.metrics)
    await publish(health_pb2.HealthCheckResponse.NOT_SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    credentials = server_credentials(settings)
    if credentials is None:
        port = server.add_insecure_port(address)
    else:
        port = server.add_secure_port(address, credentials)
    await server.start()
    await health_servicer.set(LIVENESS_SERVICE, health_pb2.HealthCheckResponse.SERVING)
    try:
        await application.stats.probe()
    except BaseException:
        await server.stop(None)
        raise
    await publish(health_pb2.HealthCheckResponse.SERVING)
    monitor = HealthMonitor(
        application.stats, publish, write_repair.repair, application.settings.health_interval_s
    )
    monitor.start(server)
    return server, port


async def serve(application: Application, settings: GrpcSettings, stop: asyncio.Event) -> None:
    """Serve until ``stop`` is set, or until no call has come for ``RETRIEVAL_IDLE_STOP_S``
    when it is set; then refuse new calls and give in-flight ones the grace period.

    Calls still running when it ends are cancelled, and given ``UNDO_S`` to undo what they
    began. The caller closes the stores afterwards. The Prometheus endpoint, when configured,
    serves from before the first call to the end.
    """
    calls = CallsInFlight()
    with metrics_served(application) as metrics_port:
        server, port = await create_server(application, settings.address, settings, calls)
        record = ServingRecord(
            address=local_address(settings.host, port),
            pid=os.getpid(),
            tls=settings.tls_cert_file is not None,
            auth=settings.authenticates,
        )
        try:
            with recorded(application.settings.data_dir, record):
                idle_stop_s = application.settings.idle_stop_s
                log.info(
                    "grpc.serving",
                    host=settings.host,
                    port=port,
                    tls=record.tls,
                    mutual_tls=settings.tls_client_ca_file is not None,
                    auth=record.auth,
                    metrics_port=metrics_port,
                    idle_stop_s=idle_stop_s,
                )
                async with stopped_when_idle(calls, idle_stop_s, stop):
                    await stop.wait()
        finally:
            log.info("grpc.draining", grace_seconds=settings.grace_seconds)
            await server.stop(settings.grace_seconds)
            log.info("grpc.stopped", calls_left=await calls.ended(UNDO_S))


@contextmanager
def metrics_served(application: Application) -> Iterator[int | None]:
    """The application's metrics at ``RETRIEVAL_METRICS_HOST:RETRIEVAL_METRICS_PORT``, or
    nothing when no port is set; yields the bound port."""
    settings = application.settings
    if settings.metrics_port is None:
        yield None
        return
    registry = application.telemetry.metrics.registry
    with metrics_endpoint(registry, settings.metrics_host, settings.metrics_port) as port:
        yield port


@contextmanager
def stop_on_signals(
    signals: Sequence[signal.Signals] = (signal.SIGTERM, signal.SIGINT),
) -> Iterator[asyncio.Event]:
    """An event set by the first of ``signals``; the loop's handlers are removed on exit."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for number in signals:
        loop.add_signal_handler(number, stop.set)
    try:
        yield stop
    finally:
        for number in signals:
            loop.remove_signal_handler(number)
