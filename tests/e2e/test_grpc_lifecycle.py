"""Deadlines, cancellation, store failures, readiness and graceful shutdown, over loopback."""

from __future__ import annotations

import asyncio
import os
import re
import signal
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import grpc
import httpx
import pytest
import structlog
from grpc_health.v1 import health_pb2, health_pb2_grpc

from retrieval.adapters.mongo.embedded_server import free_port
from retrieval.domain.collection_health import HealthStatus
from retrieval.domain.models import RagChunk, RagDocument
from retrieval.domain.vectors import VectorRecord
from retrieval.errors import (
    BackendTimeoutError,
    BackendUnavailableError,
    RateLimitedError,
    RetrievalError,
)
from retrieval.grpc import GrpcSettings, RetrievalClient, RetryPolicy, create_server
from retrieval.grpc.health import MONITOR_TASK
from retrieval.grpc.server import LIVENESS_SERVICE, SERVICE_NAME, serve, stop_on_signals
from retrieval.lifecycle import Application, running
from retrieval.ports.embedder import Vector
from retrieval.service.ingestion.outcomes import Outcome
from retrieval.settings import Settings
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb
from retrieval_proto.retrieval.v1 import retrieval_pb2_grpc
from retrieval_testkit import (
    HashEmbedder,
    InMemoryChunkRepository,
    InMemoryVectorIndex,
)
from retrieval_testkit.container import in_memory_container
from retrieval_testkit.embedded_mongo import (
    kill_server,
    on_embedded_mongo,
    pausing_supervisor,
    restarted,
)
from retrieval_testkit.served_process import serve_environment, served_process

NAMESPACE = "lifecycle"
DOCUMENT = RagDocument(
    document_id="frost",
    title="Frost",
    domain="weather_patterns",
    content="Ground frost scorches the plucking table of tea bushes on still winter nights.",
)
SECOND_DOCUMENT = RagDocument(
    document_id="drought",
    title="Drought",
    domain="weather_patterns",
    content="Long droughts wilt young tea bushes; growers mulch the rows to keep soil moist.",
)
FAST_RETRIES = RetryPolicy(attempts=3, initial_backoff=0.01, max_backoff=0.02)


class SlowEmbedder(HashEmbedder):
    """Takes ``delay`` seconds per query and records whether the wait was cut short."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()
        self.finished = asyncio.Event()

    async def embed_query(self, text: str) -> Vector:
        self.started.set()
        try:
            await asyncio.sleep(self.delay)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        self.finished.set()
        return await super().embed_query(text)


class BarrierEmbedder(HashEmbedder):
    """Answers no query until ``parties`` queries are waiting at once."""

    def __init__(self, parties: int) -> None:
        super().__init__()
        self.parties = parties
        self.waiting = 0
        self.all_in = asyncio.Event()

    async def embed_query(self, text: str) -> Vector:
        self.waiting += 1
        if self.waiting == self.parties:
            self.all_in.set()
        await asyncio.wait_for(self.all_in.wait(), timeout=10)
        return await super().embed_query(text)


class FailingChunkRepository(InMemoryChunkRepository):
    """Raises ``error`` on every read of chunk texts, counting the reads."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error

    async def get_many(self, chunk_ids: Sequence[str], namespace: str) -> dict[str, RagChunk]:
        self.get_many_calls += 1
        raise self.error


class FailingVectorIndex(InMemoryVectorIndex):
    async def upsert(self, records: Sequence[VectorRecord], namespace: str) -> int:
        raise BackendUnavailableError("index refused the write")


class GatedChunkRepository(InMemoryChunkRepository):
    """``count`` answers only once ``gate`` is set: a store that is not reachable yet."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()

    async def count(self, namespace: str | None = None) -> int:
        await self.gate.wait()
        return await super().count(namespace)


@asynccontextmanager
async def application(
    tmp_path: Path,
    embedder: HashEmbedder | None = None,
    chunks: InMemoryChunkRepository | None = None,
    index: InMemoryVectorIndex | None = None,
) -> AsyncIterator[Application]:
    """The container's services on in-memory stores, with the demo document ingested."""
    settings = Settings(data_dir=tmp_path)
    container = in_memory_container(
        settings,
        model_embedder=embedder or HashEmbedder(),
        vector_index=index or InMemoryVectorIndex(),
        chunk_repository=chunks or InMemoryChunkRepository(),
    )
    async with running(settings, container) as app:
        await app.ingestion.ingest([DOCUMENT], NAMESPACE)
        yield app


@asynccontextmanager
async def served(app: Application, settings: GrpcSettings | None = None) -> AsyncIterator[int]:
    server, port = await create_server(app, "127.0.0.1:0", settings or GrpcSettings())
    try:
        yield port
    finally:
        await server.stop(None)


def request() -> pb.RetrieveRequest:
    return pb.RetrieveRequest(query="frost", namespace=NAMESPACE)


async def test_deadline_stops_the_work_downstream(tmp_path: Path) -> None:
    embedder = SlowEmbedder(delay=30)
    async with application(tmp_path, embedder) as app, served(app) as port:
        async with RetrievalClient.connect(f"127.0.0.1:{port}") as client:
            with pytest.raises(BackendTimeoutError):
                await client.retrieve("frost", namespace=NAMESPACE, timeout=0.3)
        await asyncio.wait_for(embedder.cancelled.wait(), timeout=5)
        assert not embedder.finished.is_set()


async def test_client_cancellation_stops_the_work_downstream(tmp_path: Path) -> None:
    embedder = SlowEmbedder(delay=30)
    async with (
        application(tmp_path, embedder) as app,
        served(app) as port,
        grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel,
    ):
        call = retrieval_pb2_grpc.RetrievalServiceStub(channel).Retrieve(request())
        await asyncio.wait_for(embedder.started.wait(), timeout=5)
        call.cancel()
        await asyncio.wait_for(embedder.cancelled.wait(), timeout=5)
        assert call.cancelled()


async def test_hundred_calls_in_flight_at_once_all_succeed(tmp_path: Path) -> None:
    embedder = BarrierEmbedder(parties=100)
    async with (
        application(tmp_path, embedder) as app,
        served(app) as port,
        RetrievalClient.connect(f"127.0.0.1:{port}") as client,
    ):
        expected = await asyncio.gather(
            *(app.retrieval.retrieve("frost", namespace=NAMESPACE) for _ in range(100))
        )
        embedder.waiting, embedder.all_in = 0, asyncio.Event()
        results = await asyncio.gather(
            *(client.retrieve("frost", namespace=NAMESPACE) for _ in range(100)),
            return_exceptions=True,
        )
    assert [r for r in results if isinstance(r, BaseException)] == []
    assert [r.model_dump(exclude={"timings", "cached"}) for r in results] == [
        r.model_dump(exclude={"timings", "cached"}) for r in expected
    ]


@pytest.mark.parametrize(
    ("error", "code", "attempts"),
    [
        (BackendUnavailableError("mongo at 10.0.0.7 refused"), grpc.StatusCode.UNAVAILABLE, 3),
        (RateLimitedError("slow down", retry_after=1), grpc.StatusCode.UNAVAILABLE, 3),
        (BackendTimeoutError("mongo at 10.0.0.7 silent"), grpc.StatusCode.DEADLINE_EXCEEDED, 1),
        (RuntimeError("mongodb://admin:hunter2@10.0.0.7"), grpc.StatusCode.INTERNAL, 1),
    ],
)
async def test_store_failures_map_to_a_status_without_internals(
    tmp_path: Path, error: Exception, code: grpc.StatusCode, attempts: int
) -> None:
    chunks = FailingChunkRepository(error)
    async with application(tmp_path, chunks=chunks) as app, served(app) as port:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
            with (
                structlog.testing.capture_logs(
                    processors=[structlog.contextvars.merge_contextvars]
                ) as logs,
                pytest.raises(grpc.aio.AioRpcError) as raised,
            ):
                await stub.Retrieve(request())
            assert raised.value.code() is code
            assert "10.0.0.7" not in raised.value.details()
            correlation_id = dict(tuple(raised.value.trailing_metadata()))["x-correlation-id"]
            [failure] = [entry for entry in logs if entry["event"].startswith("grpc.")]
            assert failure["correlation_id"] == correlation_id
            assert (failure["log_level"] == "error") is (code is grpc.StatusCode.INTERNAL)
            assert (await stub.GetStats(pb.GetStatsRequest())).total_vector_count == 1

        chunks.get_many_calls = 0
        async with RetrievalClient.connect(f"127.0.0.1:{port}", retry=FAST_RETRIES) as client:
            with pytest.raises(RetrievalError):
                await client.retrieve("frost", namespace=NAMESPACE)
        assert chunks.get_many_calls == attempts


async def test_failed_write_is_reported_per_document(tmp_path: Path) -> None:
    async with (
        application(tmp_path, index=FailingVectorIndex()) as app,
        served(app) as port,
        RetrievalClient.connect(f"127.0.0.1:{port}") as client,
    ):
        [outcome] = await client.ingest_documents([DOCUMENT], namespace=NAMESPACE)
    assert outcome.outcome is Outcome.FAILED
    assert outcome.error == "index refused the write"


async def test_health_turns_serving_once_the_stores_answer(tmp_path: Path) -> None:
    chunks = GatedChunkRepository()
    chunks.gate.set()
    async with application(tmp_path, chunks=chunks) as app:
        chunks.gate.clear()
        port = free_port()
        starting = asyncio.create_task(create_server(app, f"127.0.0.1:{port}", GrpcSettings()))
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            health = health_pb2_grpc.HealthStub(channel)
            check = health_pb2.HealthCheckRequest()
            answer = await health.Check(check, wait_for_ready=True, timeout=5)
            assert answer.status == health_pb2.HealthCheckResponse.NOT_SERVING
            chunks.gate.set()
            server, _ = await starting
            answer = await health.Check(check, timeout=5)
            assert answer.status == health_pb2.HealthCheckResponse.SERVING
        await server.stop(None)


async def test_unreachable_stores_stop_the_server(tmp_path: Path) -> None:
    class Unreachable(InMemoryChunkRepository):
        async def count(self, namespace: str | None = None) -> int:
            raise BackendUnavailableError("no MongoDB")

    async with application(tmp_path, chunks=Unreachable()) as app:
        port = free_port()
        with pytest.raises(BackendUnavailableError):
            await create_server(app, f"127.0.0.1:{port}", GrpcSettings())
        with pytest.raises(ConnectionRefusedError):
            await asyncio.open_connection("127.0.0.1", port)


async def test_stats_report_the_health_of_the_collection(tmp_path: Path) -> None:
    index = InMemoryVectorIndex()
    async with (
        application(tmp_path, index=index) as app,
        served(app) as port,
        RetrievalClient.connect(f"127.0.0.1:{port}") as client,
    ):
        await app.ingestion.ingest([SECOND_DOCUMENT], NAMESPACE)
        healthy = await client.stats()
        assert (healthy.status, healthy.reasons) == (HealthStatus.GREEN, ())
        assert healthy.embedding_model == HashEmbedder().model
        assert healthy.total_chunk_count == healthy.total_vector_count == 2
        sizes = {footprint.store: footprint for footprint in healthy.footprints}
        assert set(sizes) == {"vector index (exact)", "keyword index (bm25)", "mongodb (embedded)"}
        assert sizes["keyword index (bm25)"].disk_bytes > 0
        assert sizes["mongodb (embedded)"].memory_bytes is None

        [lost, *_] = [chunk async for page in index.list_ids(NAMESPACE) for chunk in page]
        await index.delete(namespace=NAMESPACE, ids=[lost])
        degraded = await client.stats()
    [namespace] = degraded.namespaces
    assert degraded.status is namespace.status is HealthStatus.YELLOW
    assert (namespace.vector_count, namespace.chunk_count) == (1, 2)
    assert namespace.orphans is not None
    assert namespace.orphans.texts_without_vectors == 1
    assert degraded.reasons == (f"namespace {NAMESPACE}: 1 texts without vectors",)


async def test_health_follows_the_stores_while_serving(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RETRIEVAL_HEALTH_INTERVAL_S", "0.05")
    monkeypatch.setenv("RETRIEVAL_HEALTH_PROBE_TIMEOUT_S", "0.2")
    chunks = GatedChunkRepository()
    chunks.gate.set()
    async with application(tmp_path, chunks=chunks) as app:
        async with (
            served(app) as port,
            grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel,
            RetrievalClient.connect(f"127.0.0.1:{port}") as client,
        ):
            [monitor] = [task for task in asyncio.all_tasks() if task.get_name() == MONITOR_TASK]
            statuses = health_pb2_grpc.HealthStub(channel).Watch(
                health_pb2.HealthCheckRequest(service=SERVICE_NAME)
            )
            assert (await statuses.read()).status == health_pb2.HealthCheckResponse.SERVING
            chunks.gate.clear()
            changed = await asyncio.wait_for(statuses.read(), timeout=5)
            assert changed.status == health_pb2.HealthCheckResponse.NOT_SERVING
            alive = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=LIVENESS_SERVICE), timeout=5
            )
            assert alive.status == health_pb2.HealthCheckResponse.SERVING
            assert store_up(app) == 0
            unreachable = await client.stats()
            assert unreachable.status is HealthStatus.RED
            assert unreachable.reasons == ("stores: store unreachable: no answer within 0.2 s",)
            chunks.gate.set()
            recovered = await asyncio.wait_for(statuses.read(), timeout=5)
            assert recovered.status == health_pb2.HealthCheckResponse.SERVING
            assert store_up(app) == 1
            assert (await client.stats()).status is HealthStatus.GREEN
            statuses.cancel()
        await asyncio.wait_for(monitor, timeout=5)


def store_up(app: Application) -> float | None:
    return app.telemetry.metrics.registry.get_sample_value("retrieval_store_up")


async def test_health_follows_the_embedded_mongodb_through_its_restart(tmp_path: Path) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path, health_interval_s=0.1)
    supervisor = pausing_supervisor(settings, restart_pause_s=3.0)
    async with on_embedded_mongo(settings, supervisor) as (app, _):
        await app.ingestion.ingest([DOCUMENT], NAMESPACE)
        async with (
            served(app) as port,
            grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel,
            RetrievalClient.connect(f"127.0.0.1:{port}", retry=FAST_RETRIES) as client,
        ):
            statuses = health_pb2_grpc.HealthStub(channel).Watch(
                health_pb2.HealthCheckRequest(service=SERVICE_NAME)
            )
            assert (await statuses.read()).status == health_pb2.HealthCheckResponse.SERVING
            await kill_server(supervisor)
            with pytest.raises(BackendUnavailableError, match="store is unavailable"):
                await client.retrieve("frost", namespace=NAMESPACE, timeout=5)
            down = await asyncio.wait_for(statuses.read(), timeout=5)
            assert down.status == health_pb2.HealthCheckResponse.NOT_SERVING
            await restarted(supervisor)
            up = await asyncio.wait_for(statuses.read(), timeout=30)
            assert up.status == health_pb2.HealthCheckResponse.SERVING
            found = await client.retrieve("frost", namespace=NAMESPACE)
            assert found.matches[0].document_id == DOCUMENT.document_id
            statuses.cancel()


async def test_sigterm_drains_in_flight_calls(tmp_path: Path) -> None:
    embedder = SlowEmbedder(delay=0.5)
    port = free_port()
    settings = GrpcSettings(host="127.0.0.1", port=port, grace_seconds=10)
    async with application(tmp_path, embedder) as app:
        with stop_on_signals() as stop:
            serving = asyncio.create_task(serve(app, settings, stop))
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
                in_flight = asyncio.ensure_future(stub.Retrieve(request(), wait_for_ready=True))
                await asyncio.wait_for(embedder.started.wait(), timeout=5)
                os.kill(os.getpid(), signal.SIGTERM)
                await asyncio.wait_for(stop.wait(), timeout=5)
                await asyncio.sleep(0.05)
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await stub.Retrieve(request(), timeout=1)
                assert refused.value.code() is grpc.StatusCode.UNAVAILABLE
                response = await in_flight
            assert response.matches[0].document_id == "frost"
            await asyncio.wait_for(serving, timeout=5)
        assert not embedder.cancelled.is_set()


async def test_grace_period_bounds_the_drain(tmp_path: Path) -> None:
    embedder = SlowEmbedder(delay=30)
    port = free_port()
    settings = GrpcSettings(host="127.0.0.1", port=port, grace_seconds=0.2)
    async with application(tmp_path, embedder) as app:
        stop = asyncio.Event()
        serving = asyncio.create_task(serve(app, settings, stop))
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
            in_flight = asyncio.ensure_future(stub.Retrieve(request(), wait_for_ready=True))
            await asyncio.wait_for(embedder.started.wait(), timeout=5)
            stop.set()
            await asyncio.wait_for(serving, timeout=5)
            with pytest.raises(grpc.aio.AioRpcError):
                await in_flight
        await asyncio.wait_for(embedder.cancelled.wait(), timeout=5)


async def test_serve_command_exposes_metrics_and_stops_cleanly_on_sigterm(
    tmp_path: Path,
) -> None:
    environment = serve_environment(tmp_path / "data", RETRIEVAL_METRICS_PORT="0")
    async with served_process(tmp_path, environment) as served:
        async with RetrievalClient.connect(served.address) as client:
            assert (await client.stats()).namespaces == ()
        async with httpx.AsyncClient() as http:
            scraped = await http.get(f"http://127.0.0.1:{served.metrics_port}/metrics")
        assert scraped.status_code == 200
        assert re.search(
            r'^retrieval_rpc_requests_total\{code="OK",method="GetStats",'
            r'service="retrieval\.v1\.RetrievalService"\} 1\.0$',
            scraped.text,
            re.MULTILINE,
        ), scraped.text
        served.process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(served.log.event("grpc.stopped"), timeout=30)
        assert await asyncio.wait_for(served.process.wait(), timeout=30) == 0
