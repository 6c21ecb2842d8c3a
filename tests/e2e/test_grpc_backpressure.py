"""The bound on calls in flight, over loopback: refused at once past it, health always answered."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from retrieval.domain.models import RagDocument
from retrieval.errors import PayloadTooLargeError, RateLimitedError
from retrieval.grpc import GrpcSettings, RetrievalClient, RetryPolicy, create_server
from retrieval.grpc.errors import TIMEOUT_MESSAGE, error_from_rpc
from retrieval.grpc.metadata import CORRELATION_ID_KEY, RETRY_AFTER_KEY, metadata_value
from retrieval.grpc.server import SERVICE_NAME
from retrieval.lifecycle import Application, running
from retrieval.ports.embedder import Vector
from retrieval.settings import Settings
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb
from retrieval_proto.retrieval.v1 import retrieval_pb2_grpc
from retrieval_testkit import (
    HashEmbedder,
)
from retrieval_testkit.container import in_memory_container
from retrieval_testkit.waiting import until

NAMESPACE = "backpressure"
LIMIT = 2
DOCUMENT = RagDocument(
    document_id="frost",
    title="Frost",
    domain="weather_patterns",
    content="Ground frost scorches the plucking table of tea bushes on still winter nights.",
)


class HeldEmbedder(HashEmbedder):
    """Holds every query until ``release`` is set, counting those held."""

    def __init__(self) -> None:
        super().__init__()
        self.held = 0
        self.release = asyncio.Event()

    async def embed_query(self, text: str) -> Vector:
        self.held += 1
        try:
            await self.release.wait()
        finally:
            self.held -= 1
        return await super().embed_query(text)


@asynccontextmanager
async def served(tmp_path: Path, embedder: HeldEmbedder) -> AsyncIterator[tuple[Application, int]]:
    """The container's services on in-memory stores, served with at most ``LIMIT`` calls."""
    settings = Settings(data_dir=tmp_path)
    container = in_memory_container(settings, model_embedder=embedder)
    async with running(settings, container) as app:
        await app.ingestion.ingest([DOCUMENT], NAMESPACE)
        server, port = await create_server(
            app, "127.0.0.1:0", GrpcSettings(_env_file=None, max_in_flight=LIMIT)
        )
        try:
            yield app, port
        finally:
            await server.stop(None)


def refused(app: Application) -> float | None:
    return app.telemetry.metrics.registry.get_sample_value(
        "retrieval_rpc_refused_total", {"service": SERVICE_NAME, "method": "Retrieve"}
    )


async def test_a_call_past_the_limit_is_refused_at_once_and_health_still_answers(
    tmp_path: Path,
) -> None:
    embedder = HeldEmbedder()
    async with (
        served(tmp_path, embedder) as (app, port),
        grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel,
    ):
        stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
        request = pb.RetrieveRequest(query="frost", namespace=NAMESPACE)
        admitted = [asyncio.ensure_future(stub.Retrieve(request)) for _ in range(LIMIT)]
        await until(lambda: embedder.held == LIMIT, "the calls to hold every slot")

        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.Retrieve(request, timeout=30)
        error = raised.value
        assert error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert f"limit of {LIMIT} calls" in (error.details() or "")
        assert metadata_value(error.trailing_metadata(), RETRY_AFTER_KEY) == "1"
        assert metadata_value(error.trailing_metadata(), CORRELATION_ID_KEY)

        health = health_pb2_grpc.HealthStub(channel)
        checked = await health.Check(health_pb2.HealthCheckRequest(service=""), timeout=30)
        assert checked.status == health_pb2.HealthCheckResponse.SERVING

        client = RetrievalClient(channel, retry=RetryPolicy(attempts=1))
        with pytest.raises(RateLimitedError) as limited:
            await client.retrieve("frost", namespace=NAMESPACE, timeout=30)
        assert limited.value.retry_after == 1.0
        assert refused(app) == 2
        assert embedder.held == LIMIT

        embedder.release.set()
        responses = await asyncio.gather(*admitted)
        assert all(response.matches for response in responses)
        assert (await stub.Retrieve(request, timeout=30)).matches


async def test_the_client_waits_out_a_refusal_and_is_answered_once_a_call_ends(
    tmp_path: Path,
) -> None:
    embedder = HeldEmbedder()
    async with (
        served(tmp_path, embedder) as (app, port),
        RetrievalClient.connect(f"127.0.0.1:{port}", timeout=60) as client,
    ):
        admitted = [
            asyncio.create_task(client.retrieve("frost", namespace=NAMESPACE)) for _ in range(LIMIT)
        ]
        await until(lambda: embedder.held == LIMIT, "the calls to hold every slot")
        started = time.monotonic()
        late = asyncio.create_task(client.retrieve("frost", namespace=NAMESPACE))
        await until(lambda: refused(app) == 1, "the refusal to be counted")
        embedder.release.set()
        results = await asyncio.gather(*admitted, late)
    assert time.monotonic() - started >= 1.0
    assert [bool(result.matches) for result in results] == [True] * (LIMIT + 1)
    assert refused(app) == 1


def test_resource_exhausted_without_a_retry_hint_is_still_an_oversized_message() -> None:
    """gRPC itself refuses a message over the size limit with RESOURCE_EXHAUSTED and no hint."""
    error = grpc.aio.AioRpcError(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.aio.Metadata(),
        grpc.aio.Metadata(),
        "Received message larger than max",
    )
    assert isinstance(error_from_rpc(error), PayloadTooLargeError)


async def test_the_server_answers_within_the_callers_deadline_and_stops_working(
    tmp_path: Path,
) -> None:
    """A call whose stores stall gets the server's DEADLINE_EXCEEDED, with its correlation
    id, before the caller's own deadline passes, and the server stops the work then."""
    embedder = HeldEmbedder()
    async with (
        served(tmp_path, embedder) as (_, port),
        grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel,
    ):
        stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
        started = time.monotonic()
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.Retrieve(pb.RetrieveRequest(query="frost", namespace=NAMESPACE), timeout=2)
        assert time.monotonic() - started < 2
        error = raised.value
        assert error.code() is grpc.StatusCode.DEADLINE_EXCEEDED
        assert error.details() == TIMEOUT_MESSAGE
        assert metadata_value(error.trailing_metadata(), CORRELATION_ID_KEY)
        assert embedder.held == 0
