"""One gRPC server through every fault of its backends in turn, and back, without a restart.

The server runs the production container on Pinecone: a dense and a sparse index, each a
loopback stand-in behind a proxy that can refuse connections (the stand-ins answer the
faults they are told to); its MongoDB stores are in memory and its embedder fails on demand.
For each fault, while it lasts: a retrieval, a write and ``GetStats`` each end within their
deadline with the status the fault maps to, and the health service says NOT_SERVING when the
index does not answer. Once the fault ends: health says SERVING again, the same server
answers, and the write the fault interrupted left its document absent or whole (the audit of
``GetStats`` finds nothing out of place).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, ExitStack, asynccontextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from retrieval.domain.models import DEFAULT_DOMAINS
from retrieval.errors import BackendUnavailableError
from retrieval.grpc import GrpcSettings, create_server
from retrieval.grpc.errors import TIMEOUT_MESSAGE
from retrieval.grpc.metadata import RETRY_AFTER_KEY, metadata_value
from retrieval.grpc.server import SERVICE_NAME
from retrieval.lifecycle import running
from retrieval.settings import Settings
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb
from retrieval_proto.retrieval.v1 import retrieval_pb2_grpc
from retrieval_testkit.container import without_mongodb
from retrieval_testkit.failing_embedder import FailingEmbedder
from retrieval_testkit.outage_proxy import OutageProxy
from retrieval_testkit.pinecone_standin import Fault, PineconeStandIn
from retrieval_testkit.waiting import until

NAMESPACE = "faults"
REQUEST_TIMEOUT_S = 0.5
CALL_TIMEOUT_S = 1.5
DEADLINE_S = 10.0
"""Of every gRPC call. The server ends each within a few Pinecone call timeouts (a write tries
the index, then its undo); a call that runs into its own deadline fails the test."""
HEALTH_WAIT_S = 30.0
EVERY_REQUEST = 100_000
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
Code = grpc.StatusCode


@dataclass
class Backends:
    dense: PineconeStandIn
    sparse: PineconeStandIn
    proxies: tuple[OutageProxy, OutageProxy]
    embedder: FailingEmbedder


FaultStart = Callable[[Backends], AbstractAsyncContextManager[None]]


def pinecone_answers(fault: Fault) -> FaultStart:
    """Both indexes (and the embedding API of the sparse one) answer every request so."""

    @asynccontextmanager
    async def lasting(backends: Backends) -> AsyncIterator[None]:
        with ExitStack() as stack:
            for standin in (backends.dense, backends.sparse):
                stack.enter_context(standin.faults(fault, count=EVERY_REQUEST))
            yield

    return lasting


@asynccontextmanager
async def connections_refused(backends: Backends) -> AsyncIterator[None]:
    for proxy in backends.proxies:
        await proxy.down()
    try:
        yield
    finally:
        for proxy in backends.proxies:
            await proxy.up()


@asynccontextmanager
async def embedder_down(backends: Backends) -> AsyncIterator[None]:
    backends.embedder.error = BackendUnavailableError("the embedding model does not answer")
    try:
        yield
    finally:
        backends.embedder.error = None


@dataclass(frozen=True)
class Seen:
    """What callers saw during a fault: each call's status (``OK+degraded`` for a retrieval
    answered by one search alone), the retry hint, the write's outcome, health."""

    retrieve: str
    retry_after: str | None
    ingest: str
    stats: str
    health: str


@dataclass(frozen=True)
class Case:
    name: str
    start: FaultStart
    expected: Seen


STORE_DOWN = "NOT_SERVING"
FAILED_WRITE = f"OK {pb.Outcome.Name(pb.OUTCOME_FAILED)}"


def store_down(retrieve: str, retry_after: str | None = None, stats: str = "OK RED") -> Seen:
    """What callers see while the vector store fails: every write fails, health is down."""
    return Seen(retrieve, retry_after, FAILED_WRITE, stats, STORE_DOWN)


CASES = [
    Case(
        "401",
        pinecone_answers(Fault(status=401)),
        store_down("FAILED_PRECONDITION"),
    ),
    Case(
        "403",
        pinecone_answers(Fault(status=403)),
        store_down("FAILED_PRECONDITION"),
    ),
    Case(
        "404",
        pinecone_answers(Fault(status=404)),
        store_down("FAILED_PRECONDITION", stats="FAILED_PRECONDITION"),
    ),
    Case(
        "429 Retry-After 30",
        pinecone_answers(Fault(status=429, retry_after="30")),
        store_down("UNAVAILABLE", retry_after="30"),
    ),
    Case(
        "500",
        pinecone_answers(Fault(status=500)),
        store_down("UNAVAILABLE"),
    ),
    Case(
        "503",
        pinecone_answers(Fault(status=503)),
        store_down("UNAVAILABLE"),
    ),
    Case(
        "slow",
        pinecone_answers(Fault(delay=5.0)),
        store_down("DEADLINE_EXCEEDED"),
    ),
    Case(
        "refused",
        connections_refused,
        store_down("UNAVAILABLE"),
    ),
    Case(
        "embedder down",
        embedder_down,
        Seen("OK+degraded", None, FAILED_WRITE, "OK GREEN", "SERVING"),
    ),
]


def document(document_id: str, content: str) -> pb.Document:
    return pb.Document(
        document_id=document_id, title=document_id, domain=DEFAULT_DOMAINS[0], content=content
    )


SEED = document("frost", "Ground frost scorches the plucking table of tea bushes on still nights.")
QUERY = pb.RetrieveRequest(query="frost on tea bushes", namespace=NAMESPACE)


@asynccontextmanager
async def served_on_pinecone(tmp_path: Path) -> AsyncIterator[tuple[Backends, grpc.aio.Channel]]:
    embedder = FailingEmbedder()
    with (
        PineconeStandIn(dimension=embedder.dimension, host="127.0.201.1") as dense,
        PineconeStandIn(vector_type="sparse", host="127.0.201.2") as sparse,
    ):
        async with (
            OutageProxy(dense.url, host="127.0.201.3") as dense_proxy,
            OutageProxy(sparse.url, host="127.0.201.4") as sparse_proxy,
        ):
            settings = Settings(
                _env_file=None,
                data_dir=tmp_path,
                index_backend="pinecone",
                pinecone_api_key=dense.api_key,
                pinecone_index_host=dense_proxy.url,
                pinecone_sparse_index_host=sparse_proxy.url,
                pinecone_control_host=sparse_proxy.url,
                pinecone_request_timeout_s=REQUEST_TIMEOUT_S,
                pinecone_call_timeout_s=CALL_TIMEOUT_S,
                health_interval_s=0.1,
                health_probe_timeout_s=1.0,
                result_cache_entries=0,
                query_vector_cache_entries=0,
            )
            container = without_mongodb(settings, model_embedder=embedder)
            async with running(settings, container) as app:
                server, port = await create_server(app, "127.0.0.1:0", GrpcSettings(_env_file=None))
                try:
                    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                        backends = Backends(dense, sparse, (dense_proxy, sparse_proxy), embedder)
                        yield backends, channel
                finally:
                    await server.stop(None)


async def timed(call: Awaitable[object]) -> tuple[object, float]:
    """What ``call`` returned or the gRPC error it raised, and the seconds it took."""
    started = time.monotonic()
    try:
        answer = await call
    except grpc.aio.AioRpcError as error:
        answer = error
    return answer, time.monotonic() - started


def status(answer: object) -> str:
    if not isinstance(answer, grpc.aio.AioRpcError):
        return "OK"
    assert answer.details() != "Deadline Exceeded", "the call ran into its own deadline"
    if answer.code() is Code.DEADLINE_EXCEEDED:
        assert answer.details() == TIMEOUT_MESSAGE
    return answer.code().name


async def health_becomes(health: health_pb2_grpc.HealthStub, wanted: int) -> None:
    async def reached() -> bool:
        request = health_pb2.HealthCheckRequest(service=SERVICE_NAME)
        return (await health.Check(request, timeout=DEADLINE_S)).status == wanted

    name = health_pb2.HealthCheckResponse.ServingStatus.Name(wanted)
    await until(reached, f"health to say {name}", HEALTH_WAIT_S, every=0.05)


@pytest.mark.timeout(600)
async def test_every_fault_gives_its_status_and_the_server_recovers_by_itself(
    tmp_path: Path,
) -> None:
    async with served_on_pinecone(tmp_path) as (backends, channel):
        stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
        health = health_pb2_grpc.HealthStub(channel)
        seeded = await stub.IngestDocuments(
            pb.IngestDocumentsRequest(namespace=NAMESPACE, documents=[SEED]), timeout=DEADLINE_S
        )
        assert [o.outcome for o in seeded.outcomes] == [pb.OUTCOME_CREATED]
        await health_becomes(health, SERVING)

        seen: dict[str, Seen] = {}
        slowest: dict[str, float] = {}
        for case in CASES:
            write = pb.IngestDocumentsRequest(
                namespace=NAMESPACE,
                documents=[document(f"during-{len(seen)}", f"Hail shreds leaves ({case.name}).")],
            )
            async with case.start(backends):
                retrieved, retrieve_s = await timed(stub.Retrieve(QUERY, timeout=DEADLINE_S))
                ingested, ingest_s = await timed(stub.IngestDocuments(write, timeout=DEADLINE_S))
                stats, stats_s = await timed(
                    stub.GetStats(pb.GetStatsRequest(), timeout=DEADLINE_S)
                )
                if case.expected.health == STORE_DOWN:
                    await health_becomes(health, NOT_SERVING)
                checked = await health.Check(
                    health_pb2.HealthCheckRequest(service=SERVICE_NAME), timeout=DEADLINE_S
                )
            seen[case.name] = Seen(
                retrieve=retrieval_status(retrieved),
                retry_after=retry_hint(retrieved),
                ingest=ingest_status(ingested),
                stats=stats_status(stats),
                health=health_pb2.HealthCheckResponse.ServingStatus.Name(checked.status),
            )
            slowest[case.name] = max(retrieve_s, ingest_s, stats_s)

            await health_becomes(health, SERVING)
            recovered = await stub.Retrieve(QUERY, timeout=DEADLINE_S)
            assert [m.document_id for m in recovered.matches][:1] == ["frost"], case.name
            assert not recovered.degraded, case.name
            audited = await whole_again(stub)
            assert (audited.status, list(audited.reasons)) == (pb.HEALTH_STATUS_GREEN, []), (
                case.name
            )

    for name, observed in seen.items():
        print(f"{name}: {observed} in {slowest[name]:.2f} s at most")
    assert seen == {case.name: case.expected for case in CASES}


async def whole_again(stub: retrieval_pb2_grpc.RetrievalServiceStub) -> pb.GetStatsResponse:
    """``GetStats`` once its audit finds the collection green, or after ``HEALTH_WAIT_S``:
    the server repairs what failed writes left in the background, once the stores answer."""

    async def green() -> bool:
        audited = await stub.GetStats(pb.GetStatsRequest(), timeout=DEADLINE_S)
        return audited.status == pb.HEALTH_STATUS_GREEN

    with suppress(TimeoutError):
        await until(green, "the audit to find the collection whole", HEALTH_WAIT_S, every=0.1)
    return await stub.GetStats(pb.GetStatsRequest(), timeout=DEADLINE_S)


def retrieval_status(answer: object) -> str:
    if isinstance(answer, pb.RetrieveResponse) and answer.degraded:
        return "OK+degraded"
    return status(answer)


def retry_hint(answer: object) -> str | None:
    if not isinstance(answer, grpc.aio.AioRpcError):
        return None
    return metadata_value(answer.trailing_metadata(), RETRY_AFTER_KEY)


def ingest_status(answer: object) -> str:
    if isinstance(answer, pb.IngestDocumentsResponse):
        [outcome] = answer.outcomes
        return f"OK {pb.Outcome.Name(outcome.outcome)}"
    return status(answer)


def stats_status(answer: object) -> str:
    if isinstance(answer, pb.GetStatsResponse):
        return f"OK {pb.HealthStatus.Name(answer.status).removeprefix('HEALTH_STATUS_')}"
    return status(answer)
