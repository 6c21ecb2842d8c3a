"""Every RPC over a real loopback channel, against the container's services on MongoDB.

The server serves an application built by the real ``Container`` with the hash embedder,
an exact index in a temporary directory and a chunk repository on the in-process MongoDB.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import grpc
import httpx
import pytest
import structlog
from google.protobuf import (
    descriptor_pb2,
    descriptor_pool,
    message_factory,
    struct_pb2,
    timestamp_pb2,
)
from google.protobuf.message import Message
from google.protobuf.struct_pb2 import Struct
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from prometheus_client.parser import text_string_to_metric_families

import retrieval.grpc
from retrieval.adapters.mongo.chunk_repository import MongoChunkRepository
from retrieval.adapters.mongo.document_ledger import MongoDocumentLedger
from retrieval.adapters.openai.chat_llm import OpenAiChatLlm
from retrieval.domain.answers import Answer, AnswerDelta, AnswerDone, AnswerEvent
from retrieval.domain.ledger import Lease
from retrieval.domain.models import (
    DEFAULT_DOMAINS,
    FusionMethod,
    RagDocument,
    RetrievalOptions,
    RetrievalQuery,
    SearchMode,
)
from retrieval.domain.validation import QueryType, ValidationCase, ValidationRequest
from retrieval.errors import (
    BackendNotConfiguredError,
    BackendUnavailableError,
    DocumentBusyError,
    InvalidRequestError,
    NotFoundError,
    RateLimitedError,
)
from retrieval.grpc import GrpcSettings, RetrievalClient, create_server
from retrieval.grpc.retrieval_conversions import query_request, result_from_proto
from retrieval.grpc.server import SERVICE_NAME
from retrieval.lifecycle import Application, running
from retrieval.logging import correlation_scope
from retrieval.observability.metrics_endpoint import metrics_endpoint
from retrieval.service.ingestion.outcomes import Outcome
from retrieval.settings import Settings
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb
from retrieval_proto.retrieval.v1 import retrieval_pb2_grpc
from retrieval_testkit import HashEmbedder, ScriptedLlm
from retrieval_testkit.container import without_mongodb
from retrieval_testkit.openai_standin import Fault, OpenAiStandIn
from retrieval_testkit.scripted_llm import Reply
from retrieval_testkit.telemetry import tracer_into

NAMESPACE = "grpc-e2e"
ANSWER = "Blister blight needs shade control [1]."
MAX_MESSAGE_BYTES = 256 * 1024
DOCUMENTS = [
    RagDocument(
        document_id="blister-blight",
        title="Blister blight",
        domain="plant_diseases",
        content="# Blister blight\n\nBlister blight (Exobasidium vexans) spreads in wet, misty "
        "weather. Growers spray copper fungicide and shorten plucking rounds.",
        metadata={"region": "assam", "severity": 3, "confidence": 0.75, "tags": ["fungus"]},
    ),
    RagDocument(
        document_id="frost",
        title="Frost protection",
        domain="weather_patterns",
        content="# Frost\n\nGround frost scorches the plucking table on clear still nights. "
        "Thatch and shade trees keep young tea bushes warm.",
        metadata={"region": "nilgiris", "seasonal": True},
    ),
    RagDocument(
        document_id="pruning",
        title="Pruning cycles",
        domain="tea_cultivation",
        content="# Pruning\n\nTea bushes are pruned every three to five years to keep the "
        "plucking table low and renew the frame of the bush.",
    ),
    RagDocument(
        document_id="grading",
        title="Black tea grading",
        domain="quality_standards",
        content="# Grading\n\nOrthodox black tea is graded by leaf size: whole leaf, broken, "
        "fannings and dust. CTC teas brew strong and fast.",
    ),
]
QUESTIONS = [
    ("How do growers control blister blight?", (), None, None),
    ("frost on tea bushes", ("weather_patterns",), 1, None),
    ("pruning the plucking table", ("tea_cultivation", "plant_diseases"), 3, 0.0),
    ("black tea leaf grades", (), 4, 0.1),
    ("wet misty weather", (), 10, 0.05),
]


@pytest.fixture
def llm() -> ScriptedLlm:
    return ScriptedLlm(lambda request: ANSWER)


@pytest.fixture
def spans() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
async def application(
    tmp_path: Path,
    mongo_repository: MongoChunkRepository,
    mongo_ledger: MongoDocumentLedger,
    llm: ScriptedLlm,
    spans: InMemorySpanExporter,
) -> AsyncIterator[Application]:
    settings = Settings(data_dir=tmp_path, ingest_lease_wait_s=0.2, allowed_domains=DEFAULT_DOMAINS)
    container = without_mongodb(
        settings,
        model_embedder=HashEmbedder(),
        document_ledger=mongo_ledger,
        chunk_repository=mongo_repository,
        llm=llm,
        tracer=tracer_into(spans),
    )
    async with running(settings, container) as app:
        await app.ingestion.ingest(DOCUMENTS, NAMESPACE)
        yield app


@pytest.fixture
async def port(application: Application) -> AsyncIterator[int]:
    settings = GrpcSettings(max_message_bytes=MAX_MESSAGE_BYTES)
    server, port = await create_server(application, "127.0.0.1:0", settings)
    yield port
    await server.stop(None)


@pytest.fixture
async def channel(port: int) -> AsyncIterator[grpc.aio.Channel]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        yield channel


@pytest.fixture
def stub(channel: grpc.aio.Channel) -> retrieval_pb2_grpc.RetrievalServiceStub:
    return retrieval_pb2_grpc.RetrievalServiceStub(channel)


@pytest.fixture
async def client(port: int) -> AsyncIterator[RetrievalClient]:
    async with RetrievalClient.connect(
        f"127.0.0.1:{port}", max_message_bytes=MAX_MESSAGE_BYTES, timeout=5
    ) as client:
        yield client


def captured_logs() -> AbstractContextManager[list[dict]]:
    """Log entries with the context variables (the correlation id) merged in."""
    return structlog.testing.capture_logs(processors=[structlog.contextvars.merge_contextvars])


async def still_serving(stub: retrieval_pb2_grpc.RetrievalServiceStub) -> None:
    response = await stub.Retrieve(pb.RetrieveRequest(query="frost", namespace=NAMESPACE))
    assert response.total_matches > 0


async def test_retrieve_gives_what_the_in_process_call_gives(
    application: Application, client: RetrievalClient
) -> None:
    for query, domains, top_k, threshold in QUESTIONS:
        given = (("top_k", top_k), ("threshold", threshold))
        arguments = {name: value for name, value in given if value is not None}
        remote = await client.retrieve(query, namespace=NAMESPACE, domains=domains, **arguments)
        local = await application.retrieval.retrieve(
            query,
            domains,
            namespace=NAMESPACE,
            top_k=top_k or 5,
            confidence_threshold=threshold or 0.0,
        )
        assert remote.matches, query
        assert [(m.chunk_id, m.score) for m in remote.matches] == [
            (m.chunk_id, m.score) for m in local.matches
        ]
        assert remote.model_dump(exclude={"timings", "cached"}) == local.model_dump(
            exclude={"timings", "cached"}
        )
        assert all(m.scores["fused"] == m.score for m in remote.matches)
        assert all("dense" in m.scores for m in remote.matches)
        assert not remote.cached
        assert local.cached, "the same request, served from the cache the remote call filled"
        assert {"embed", "dense", "keyword", "search", "fuse", "fetch"} <= set(
            remote.timings.stages
        )
        assert remote.timings.total_ms > 0
        assert remote.timings.embed_ms == remote.timings.stages["embed"] > 0


async def test_options_travel_over_grpc(application: Application, client: RetrievalClient) -> None:
    options = RetrievalOptions(
        mode=SearchMode.HYBRID,
        fusion=FusionMethod.RRF,
        keyword_weight=0.5,
        fetch_k=20,
        mmr_lambda=0.6,
        max_per_document=1,
        llm_filter=True,
    )
    asked = RetrievalQuery(query="blister blight", top_k=3, namespace=NAMESPACE, options=options)
    local = await application.retrieval.retrieve_query(asked)
    remote = await client.retrieve_query(asked)
    assert remote.model_dump(exclude={"timings", "cached"}) == local.model_dump(
        exclude={"timings", "cached"}
    )
    assert remote.degraded == ("llm_filter",), "asked of a model the tests do not configure"
    assert len({m.document_id for m in remote.matches}) == len(remote.matches)
    dense = await client.retrieve(
        "blister blight", namespace=NAMESPACE, top_k=3, mode=SearchMode.DENSE
    )
    assert all(m.scores == {"dense": m.score} for m in dense.matches)


async def test_build_context_gives_what_the_in_process_call_gives(
    application: Application, client: RetrievalClient
) -> None:
    asked = RetrievalQuery(query="blister blight", top_k=3, namespace=NAMESPACE)
    local = await application.answers.build_context(asked)
    remote = await client.build_context(asked)
    assert remote.context == local.context
    assert [c.number for c in remote.context.citations] == [1, 2, 3]
    assert remote.retrieval.model_dump(exclude={"timings", "cached"}) == local.retrieval.model_dump(
        exclude={"timings", "cached"}
    )


async def test_answer_comes_back_with_its_citations(
    application: Application, client: RetrievalClient, llm: ScriptedLlm
) -> None:
    asked = RetrievalQuery(query="blister blight", top_k=3, namespace=NAMESPACE)
    remote = await client.answer(asked)
    local = await application.answers.answer(asked)
    assert remote.text == ANSWER
    assert remote.citations == local.citations == (local.context.citations[0],)
    assert remote.confidence == 1.0
    assert remote.namespace == NAMESPACE
    assert remote.model_dump(exclude={"retrieval_timings", "generation_ms"}) == local.model_dump(
        exclude={"retrieval_timings", "generation_ms"}
    )
    assert "Question: blister blight" in llm.calls[0].messages[-1].content


async def test_answer_without_a_model_is_a_failed_precondition(
    stub: retrieval_pb2_grpc.RetrievalServiceStub, llm: ScriptedLlm
) -> None:
    def unconfigured(request: object) -> str:
        raise BackendNotConfiguredError("set RETRIEVAL_LLM_BASE_URL and RETRIEVAL_LLM_MODEL")

    llm.reply = unconfigured
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await stub.Answer(
            pb.AnswerRequest(
                retrieval=pb.RetrieveRequest(query="blister blight", namespace=NAMESPACE)
            )
        )
    assert raised.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert "RETRIEVAL_LLM_BASE_URL" in raised.value.details()
    await still_serving(stub)


async def test_a_rate_limited_backend_passes_its_retry_after_to_the_client(
    stub: retrieval_pb2_grpc.RetrievalServiceStub, client: RetrievalClient, llm: ScriptedLlm
) -> None:
    def rate_limited(request: object) -> str:
        raise RateLimitedError("chat model answered 429", retry_after=30.0)

    llm.reply = rate_limited
    asked = RetrievalQuery(query="blister blight", top_k=3, namespace=NAMESPACE)
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await stub.Answer(pb.AnswerRequest(retrieval=query_request(asked)))
    assert raised.value.code() is grpc.StatusCode.UNAVAILABLE
    trailing = dict(tuple(raised.value.trailing_metadata()))
    assert trailing["x-retry-after-s"] == "30"
    assert "x-correlation-id" in trailing
    calls = len(llm.calls)
    with pytest.raises(RateLimitedError) as remote:
        await client.answer(asked)
    assert remote.value.retry_after == 30.0
    assert len(llm.calls) == calls + 1, "a hint past the deadline is not waited for"


def rate_limited_once(llm: ScriptedLlm) -> Reply:
    """The model's first call refused (429, try again after 0.5 s), ``ANSWER`` after."""

    def reply(request: object) -> str:
        if len(llm.calls) == 1:
            raise RateLimitedError("chat model answered 429", retry_after=0.5)
        return ANSWER

    return reply


async def test_the_client_waits_a_short_retry_after_then_tries_again(
    client: RetrievalClient, llm: ScriptedLlm
) -> None:
    llm.reply = rate_limited_once(llm)
    started = time.perf_counter()
    answer = await client.answer(RetrievalQuery(query="blister blight", namespace=NAMESPACE))
    assert answer.text == ANSWER
    assert len(llm.calls) == 2
    assert time.perf_counter() - started >= 0.5


async def streamed_answer(events: AsyncGenerator[AnswerEvent, None]) -> tuple[list[str], Answer]:
    *deltas, done = [event async for event in events]
    assert isinstance(done, AnswerDone)
    return [delta.text for delta in deltas if isinstance(delta, AnswerDelta)], done.answer


async def test_a_streamed_answer_comes_in_pieces_then_whole_with_its_citations(
    client: RetrievalClient,
) -> None:
    asked = RetrievalQuery(query="blister blight", top_k=3, namespace=NAMESPACE)
    texts, streamed = await streamed_answer(client.answer_stream(asked))
    whole = await client.answer(asked)
    assert texts == ["Blister ", "blight ", "needs ", "shade ", "control ", "[1]."]
    assert streamed.citations == (streamed.context.citations[0],)
    assert streamed.model_dump(exclude={"generation_ms"}) == whole.model_dump(
        exclude={"generation_ms"}
    )


async def test_a_streamed_answer_without_a_model_is_a_failed_precondition(
    stub: retrieval_pb2_grpc.RetrievalServiceStub, client: RetrievalClient, llm: ScriptedLlm
) -> None:
    def unconfigured(request: object) -> str:
        raise BackendNotConfiguredError("set RETRIEVAL_LLM_BASE_URL and RETRIEVAL_LLM_MODEL")

    llm.reply = unconfigured
    asked = RetrievalQuery(query="blister blight", namespace=NAMESPACE)
    call = stub.AnswerStream(
        pb.AnswerStreamRequest(retrieval=query_request(asked)),
        metadata=(("x-correlation-id", "stream-1"),),
    )
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call.read()
    assert raised.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert ("x-correlation-id", "stream-1") in tuple(raised.value.trailing_metadata())
    with pytest.raises(BackendNotConfiguredError, match="RETRIEVAL_LLM_BASE_URL"):
        await streamed_answer(client.answer_stream(asked))
    await still_serving(stub)


async def test_a_stream_refused_before_its_first_piece_is_tried_again(
    client: RetrievalClient, llm: ScriptedLlm
) -> None:
    llm.reply = rate_limited_once(llm)
    asked = RetrievalQuery(query="blister blight", namespace=NAMESPACE)
    texts, answer = await streamed_answer(client.answer_stream(asked))
    assert "".join(texts) == answer.text == ANSWER
    assert len(llm.calls) == 2


async def read_into(given: list[AnswerEvent], events: AsyncGenerator[AnswerEvent, None]) -> None:
    async for event in events:
        given.append(event)


class TestStreamingFromAModelServer:
    """The server's model is the OpenAI-compatible adapter, over HTTP to a stand-in."""

    @pytest.fixture
    def standin(self) -> Iterator[OpenAiStandIn]:
        with OpenAiStandIn(reply=lambda request: ANSWER) as s:
            yield s

    @pytest.fixture
    async def llm(self, standin: OpenAiStandIn) -> AsyncIterator[OpenAiChatLlm]:
        llm = OpenAiChatLlm(standin.base_url, None, standin.model)
        yield llm
        await llm.close()

    async def test_a_client_that_closes_its_stream_stops_the_model(
        self, client: RetrievalClient, standin: OpenAiStandIn
    ) -> None:
        standin.inject(Fault(hold_after=1))
        stream = client.answer_stream(RetrievalQuery(query="blister blight", namespace=NAMESPACE))
        assert await anext(stream) == AnswerDelta(text="Blister ")
        await stream.aclose()
        [ended] = await asyncio.to_thread(standin.ended_streams)
        assert ended.hung_up
        assert ended.sent == 1

    async def test_a_cancelled_client_stops_the_model(
        self, client: RetrievalClient, standin: OpenAiStandIn
    ) -> None:
        standin.inject(Fault(hold_after=1))
        first = asyncio.Event()

        async def ask() -> None:
            asked = RetrievalQuery(query="blister blight", namespace=NAMESPACE)
            async for _ in client.answer_stream(asked):
                first.set()

        task = asyncio.create_task(ask())
        await asyncio.wait_for(first.wait(), timeout=5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        [ended] = await asyncio.to_thread(standin.ended_streams)
        assert ended.hung_up

    async def test_the_model_failing_mid_stream_ends_it_with_the_status(
        self, client: RetrievalClient, standin: OpenAiStandIn
    ) -> None:
        standin.inject(Fault(cut_after=2))
        given: list[AnswerEvent] = []
        stream = client.answer_stream(RetrievalQuery(query="blister blight", namespace=NAMESPACE))
        with pytest.raises(BackendUnavailableError):
            await read_into(given, stream)
        assert given == [AnswerDelta(text="Blister "), AnswerDelta(text="blight ")]
        assert len(standin.requests) == 1


async def test_a_query_over_the_window_comes_back_truncated(client: RetrievalClient) -> None:
    result = await client.retrieve("frost " * 1000, namespace=NAMESPACE)
    assert result.query_truncated
    assert result.degraded == ()


async def test_retrieve_query_gives_what_the_in_process_call_gives(
    application: Application, client: RetrievalClient
) -> None:
    asked = RetrievalQuery(
        query="frost on tea bushes", domains=("weather_patterns",), top_k=2, namespace=NAMESPACE
    )
    local = await application.retrieval.retrieve_query(asked)
    remote = await client.retrieve_query(asked)
    assert remote.matches
    assert remote.model_dump(exclude={"timings", "cached"}) == local.model_dump(
        exclude={"timings", "cached"}
    )


def previous_response_class() -> type[Message]:
    """``RetrieveResponse`` as the contract defined it before ``stage_ms`` and ``scores``."""
    contract = descriptor_pb2.FileDescriptorProto()
    pb.DESCRIPTOR.CopyToProto(contract)
    for message in contract.message_type:
        added = {"RetrieveResponse": "stage_ms", "RetrievalMatch": "scores"}.get(message.name)
        if added:
            [field] = [f for f in message.field if f.name == added]
            message.field.remove(field)
            [entry] = [n for n in message.nested_type if f".{n.name}" in field.type_name]
            message.nested_type.remove(entry)
    pool = descriptor_pool.DescriptorPool()
    for dependency in (struct_pb2, timestamp_pb2):
        imported = descriptor_pb2.FileDescriptorProto()
        dependency.DESCRIPTOR.CopyToProto(imported)
        pool.Add(imported)
    pool.Add(contract)
    return message_factory.GetMessageClass(
        pool.FindMessageTypeByName("retrieval.v1.RetrieveResponse")
    )


async def test_a_client_that_predates_the_maps_reads_the_fixed_fields(
    stub: retrieval_pb2_grpc.RetrievalServiceStub,
) -> None:
    response = await stub.Retrieve(pb.RetrieveRequest(query="frost", namespace=NAMESPACE))
    previous = previous_response_class()
    assert "stage_ms" not in previous.DESCRIPTOR.fields_by_name
    old = previous.FromString(response.SerializeToString())
    assert [m.chunk_id for m in old.matches] == [m.chunk_id for m in response.matches]
    assert [m.score for m in old.matches] == [m.score for m in response.matches]
    assert old.timings.embed_ms == response.stage_ms["embed"] > 0
    assert old.timings.search_ms == response.stage_ms["search"]
    assert old.timings.fetch_ms == response.stage_ms["fetch"]
    assert old.timings.total_ms > 0


def without_maps(response: pb.RetrieveResponse) -> pb.RetrieveResponse:
    """The response as a server from before ``stage_ms`` and ``scores`` would send it."""
    old = pb.RetrieveResponse()
    old.CopyFrom(response)
    old.ClearField("stage_ms")
    for match in old.matches:
        match.ClearField("scores")
    return old


async def test_a_response_without_the_maps_still_converts(
    stub: retrieval_pb2_grpc.RetrievalServiceStub,
) -> None:
    response = await stub.Retrieve(pb.RetrieveRequest(query="frost", namespace=NAMESPACE))
    converted = result_from_proto(without_maps(response))
    assert converted.timings.stages == {
        "embed": response.timings.embed_ms,
        "search": response.timings.search_ms,
        "fetch": response.timings.fetch_ms,
    }
    assert [m.scores for m in converted.matches] == [{} for _ in response.matches]


async def test_metadata_keeps_its_types(client: RetrievalClient) -> None:
    result = await client.retrieve("blister blight copper fungicide", namespace=NAMESPACE)
    blight = next(m for m in result.matches if m.document_id == "blister-blight")
    assert blight.metadata == DOCUMENTS[0].metadata
    assert isinstance(blight.metadata["severity"], int)
    assert isinstance(blight.metadata["confidence"], float)


async def test_blank_query_is_an_empty_result(client: RetrievalClient) -> None:
    result = await client.retrieve("   ", namespace=NAMESPACE)
    assert result.matches == ()
    assert result.total_matches == 0


async def test_ingest_reports_each_document(
    application: Application, client: RetrievalClient
) -> None:
    changed = DOCUMENTS[1].model_copy(update={"content": DOCUMENTS[1].content + " Hail too."})
    new = RagDocument(
        document_id="red-rust",
        title="Red rust",
        domain="plant_diseases",
        content="Red rust (Cephaleuros) shows orange patches on stressed bushes.",
        metadata={"region": "assam"},
    )
    outcomes = await client.ingest_documents([DOCUMENTS[0], changed, new], namespace=NAMESPACE)
    assert [(o.document_id, o.outcome) for o in outcomes] == [
        ("blister-blight", Outcome.UNCHANGED),
        ("frost", Outcome.UPDATED),
        ("red-rust", Outcome.CREATED),
    ]
    assert all(o.chunks >= 1 and o.error is None for o in outcomes)
    found = await application.retrieval.retrieve("orange patches red rust", namespace=NAMESPACE)
    assert found.matches[0].document_id == "red-rust"


async def test_a_document_another_writer_holds_is_aborted(
    application: Application, client: RetrievalClient, mongo_ledger: MongoDocumentLedger
) -> None:
    elsewhere = Lease(owner="another-replica", host="replica-2", pid=7)
    await mongo_ledger.claim(NAMESPACE, ["frost"], elsewhere)
    with pytest.raises(DocumentBusyError, match=r"'frost'.*another call"):
        await client.delete_document("frost", namespace=NAMESPACE)
    await mongo_ledger.release(NAMESPACE, ["frost"], elsewhere)
    assert await client.delete_document("frost", namespace=NAMESPACE) == 1


async def test_delete_document_then_namespace(
    application: Application, client: RetrievalClient
) -> None:
    chunks = (await application.stats.namespace(NAMESPACE)).chunk_count
    assert await client.delete_document("frost", namespace=NAMESPACE) == 1
    assert await client.delete_document("frost", namespace=NAMESPACE) == 0
    assert await client.delete_namespace(NAMESPACE) == chunks - 1
    assert (await application.stats.namespace(NAMESPACE)).chunk_count == 0
    with pytest.raises(NotFoundError, match="grpc-e2e"):
        await client.retrieve("frost", namespace=NAMESPACE)


async def test_stats_count_both_stores(client: RetrievalClient) -> None:
    stats = await client.stats()
    assert stats.dimension == HashEmbedder().dimension
    [summary] = stats.namespaces
    assert summary.namespace == NAMESPACE
    assert summary.vector_count == summary.chunk_count == stats.total_vector_count >= 4


async def test_health_is_serving(channel: grpc.aio.Channel) -> None:
    health = health_pb2_grpc.HealthStub(channel)
    for service in ("", SERVICE_NAME):
        response = await health.Check(health_pb2.HealthCheckRequest(service=service))
        assert response.status == health_pb2.HealthCheckResponse.SERVING


async def test_reflection_lists_the_service(channel: grpc.aio.Channel) -> None:
    reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
    responses = reflection.ServerReflectionInfo(
        iter([reflection_pb2.ServerReflectionRequest(list_services="")])
    )
    names = [
        service.name
        async for response in responses
        for service in response.list_services_response.service
    ]
    assert "retrieval.v1.RetrievalService" in names
    assert "grpc.health.v1.Health" in names


def retrieve(**fields: object) -> pb.RetrieveRequest:
    return pb.RetrieveRequest(**{"query": "frost", "namespace": NAMESPACE, **fields})


@pytest.mark.parametrize(
    ("request_message", "field"),
    [
        pytest.param(retrieve(query="tea " * 9000), "query", id="huge-query"),
        pytest.param(
            retrieve(options=pb.RetrievalOptions(mode="semantic")), "options.mode", id="mode"
        ),
        pytest.param(
            retrieve(options=pb.RetrievalOptions(fetch_k=0)), "options.fetch_k", id="fetch-k-0"
        ),
        pytest.param(
            retrieve(options=pb.RetrievalOptions(mmr_lambda=float("nan"))),
            "options.mmr_lambda",
            id="mmr-nan",
        ),
        pytest.param(retrieve(top_k=0), "top_k", id="top-k-0"),
        pytest.param(retrieve(top_k=10**6), "top_k", id="top-k-million"),
        pytest.param(retrieve(confidence_threshold=-1), "confidence_threshold", id="threshold-1"),
        pytest.param(retrieve(confidence_threshold=2), "confidence_threshold", id="threshold-2"),
        pytest.param(
            retrieve(confidence_threshold=float("nan")), "confidence_threshold", id="threshold-nan"
        ),
        pytest.param(retrieve(domains=["volcanoes"]), "domains", id="unknown-domain"),
        pytest.param(
            retrieve(domains=[f"unknown_{n}" for n in range(3000)]),
            "domains",
            id="thousands-of-unknown-domains",
        ),
        pytest.param(retrieve(domains=["Not A Domain"]), "domains.0", id="malformed-domain"),
        pytest.param(retrieve(namespace="../x"), "namespace", id="namespace-dot-dot"),
        pytest.param(retrieve(namespace="a b"), "namespace", id="namespace-space"),
    ],
)
async def test_bad_retrieve_is_invalid_argument(
    stub: retrieval_pb2_grpc.RetrievalServiceStub, request_message: pb.RetrieveRequest, field: str
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await stub.Retrieve(request_message)
    assert raised.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert raised.value.details().startswith(f"{field}: ")
    assert ("x-error-field", field) in tuple(raised.value.trailing_metadata())
    await still_serving(stub)


def document(**fields: object) -> pb.Document:
    values = {
        "document_id": "ok",
        "title": "Ok",
        "domain": "plant_diseases",
        "content": "Some text.",
        **fields,
    }
    return pb.Document(**values)


def struct(**values: object) -> Struct:
    message = Struct()
    message.update(values)
    return message


def ingest(*documents: pb.Document, namespace: str = "") -> pb.IngestDocumentsRequest:
    return pb.IngestDocumentsRequest(namespace=namespace, documents=documents)


async def stored_texts(application: Application) -> list[int]:
    """Chunk texts in every namespace a refused write could have reached."""
    reachable = (NAMESPACE, application.settings.default_namespace)
    return [(await application.stats.namespace(name)).chunk_count for name in reachable]


@pytest.mark.parametrize(
    ("request_message", "field"),
    [
        pytest.param(ingest(document(), namespace="../x"), "namespace", id="namespace-dot-dot"),
        pytest.param(ingest(document(), namespace="a b"), "namespace", id="namespace-space"),
        pytest.param(ingest(document(domain="volcanoes")), "domain", id="unknown-domain"),
        pytest.param(
            ingest(*(document(document_id=f"d{n}") for n in range(1001))),
            "documents",
            id="more-documents-than-a-call-carries",
        ),
        pytest.param(
            ingest(document(document_id="")), "documents[0].document_id", id="empty-document-id"
        ),
        pytest.param(
            ingest(document(), document(content="")), "documents[1].content", id="empty-content"
        ),
        pytest.param(ingest(document(), document()), "document_id", id="duplicate-document"),
        pytest.param(
            ingest(document(metadata=struct(owner=None))),
            "documents[0].metadata",
            id="metadata-null",
        ),
        pytest.param(
            ingest(document(metadata=struct(nested={"a": 1}))),
            "documents[0].metadata",
            id="metadata-nested-object",
        ),
        pytest.param(
            ingest(document(metadata=struct(years=[2020, 2021]))),
            "documents[0].metadata",
            id="metadata-list-of-numbers",
        ),
        pytest.param(
            ingest(document(metadata=struct(domain="x"))), "metadata", id="metadata-reserved-key"
        ),
        pytest.param(
            ingest(document(), document(document_id="nul", metadata=struct(**{"a\x00b": 1}))),
            "documents[1].metadata",
            id="metadata-key-with-nul",
        ),
        pytest.param(
            pb.DeleteDocumentRequest(document_id="../etc", namespace=NAMESPACE),
            "document_id",
            id="delete-document-dot-dot",
        ),
        pytest.param(
            pb.DeleteDocumentRequest(document_id="frost", namespace="a b"),
            "namespace",
            id="delete-document-namespace-space",
        ),
        pytest.param(pb.DeleteNamespaceRequest(), "namespace", id="delete-namespace-missing"),
        pytest.param(
            pb.DeleteNamespaceRequest(namespace="../x"), "namespace", id="delete-namespace-dot-dot"
        ),
    ],
)
async def test_bad_write_is_invalid_argument(
    application: Application,
    stub: retrieval_pb2_grpc.RetrievalServiceStub,
    request_message: object,
    field: str,
) -> None:
    method = {
        pb.IngestDocumentsRequest: stub.IngestDocuments,
        pb.DeleteDocumentRequest: stub.DeleteDocument,
        pb.DeleteNamespaceRequest: stub.DeleteNamespace,
    }[type(request_message)]
    before = await stored_texts(application)
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await method(request_message)
    assert raised.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert raised.value.details().startswith(f"{field}: ")
    assert await stored_texts(application) == before
    await still_serving(stub)


async def test_client_raises_the_in_process_error(
    application: Application, client: RetrievalClient
) -> None:
    with pytest.raises(InvalidRequestError) as local:
        await application.retrieval.retrieve("frost", top_k=0, namespace=NAMESPACE)
    with pytest.raises(InvalidRequestError) as remote:
        await client.retrieve("frost", top_k=0, namespace=NAMESPACE)
    assert (remote.value.field, str(remote.value)) == (local.value.field, str(local.value))
    with pytest.raises(InvalidRequestError, match="top_k"):
        await client.retrieve("frost", top_k=10**12, namespace=NAMESPACE)


async def test_message_over_the_limit_is_refused(
    stub: retrieval_pb2_grpc.RetrievalServiceStub,
) -> None:
    huge = pb.IngestDocumentsRequest(documents=[document(content="x" * MAX_MESSAGE_BYTES)])
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await stub.IngestDocuments(huge)
    assert raised.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    await still_serving(stub)


async def test_correlation_id_is_returned_and_logged(
    stub: retrieval_pb2_grpc.RetrievalServiceStub,
) -> None:
    with captured_logs() as logs:
        call = stub.Retrieve(retrieve(), metadata=(("x-correlation-id", "agent-42.turn-7"),))
        await call
    assert ("x-correlation-id", "agent-42.turn-7") in tuple(await call.trailing_metadata())
    done = next(entry for entry in logs if entry["event"] == "retrieve.done")
    assert done["correlation_id"] == "agent-42.turn-7"


async def test_correlation_id_is_generated_when_absent_or_unusable(
    stub: retrieval_pb2_grpc.RetrievalServiceStub,
) -> None:
    for metadata in ((), (("x-correlation-id", "a b"),), (("x-correlation-id", "x" * 200),)):
        call = stub.Retrieve(retrieve(top_k=0), metadata=metadata)
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await call
        trailing = dict(tuple(raised.value.trailing_metadata()))
        assert len(trailing["x-correlation-id"]) == 32
        assert trailing["x-error-field"] == "top_k"


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(b"\x0a\x02\xff\xfe", id="invalid-utf8-query"),
        pytest.param(b"\x0a\x05frost\x12\x03\xc3\x28\x41", id="invalid-utf8-domain"),
        pytest.param(b"\x0a\x20truncated", id="truncated"),
    ],
)
async def test_bytes_that_do_not_decode_are_invalid_argument_with_a_correlation_id(
    channel: grpc.aio.Channel, stub: retrieval_pb2_grpc.RetrievalServiceStub, payload: bytes
) -> None:
    raw = channel.unary_unary(
        f"/{SERVICE_NAME}/Retrieve", request_serializer=None, response_deserializer=None
    )
    call = raw(payload, metadata=(("x-correlation-id", "hostile-1"),))
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call
    assert raised.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "decode" in raised.value.details()
    assert ("x-correlation-id", "hostile-1") in tuple(raised.value.trailing_metadata())
    await still_serving(stub)


async def test_client_sends_the_bound_correlation_id(client: RetrievalClient) -> None:
    with captured_logs() as logs, correlation_scope("agent-run-9"):
        await client.retrieve("frost", namespace=NAMESPACE)
    done = next(entry for entry in logs if entry["event"] == "retrieve.done")
    assert done["correlation_id"] == "agent-run-9"


def test_public_surface_is_deliberate() -> None:
    assert set(retrieval.grpc.__all__) == {
        "CollectionStats", "GrpcSettings", "HealthStatus", "NamespaceHealth", "PathSync",
        "RetrievalClient", "RetryPolicy", "TlsOptions", "create_server", "serve", "stop_on_signals",
    }  # fmt: skip


def scrape(port: int) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of the endpoint, keyed by name and labels."""
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def grown(before: dict, after: dict, name: str, **labels: str) -> float:
    key = (name, frozenset(labels.items()))
    return after.get(key, 0.0) - before.get(key, 0.0)


async def test_the_metrics_endpoint_moves_with_traffic(
    application: Application, stub: retrieval_pb2_grpc.RetrievalServiceStub
) -> None:
    registry = application.telemetry.metrics.registry
    rpc = {"service": SERVICE_NAME, "method": "Retrieve"}
    with metrics_endpoint(registry, "127.0.0.1", 0) as metrics_port:
        before = scrape(metrics_port)
        for query in ("frost", "blister blight", "pruning"):
            await stub.Retrieve(pb.RetrieveRequest(query=query, namespace=NAMESPACE))
        with pytest.raises(grpc.aio.AioRpcError):
            await stub.Retrieve(pb.RetrieveRequest(query="frost", domains=["astrology"]))
        after = scrape(metrics_port)

    assert grown(before, after, "retrieval_rpc_duration_seconds_count", **rpc) == 4
    assert grown(before, after, "retrieval_rpc_requests_total", code="OK", **rpc) == 3
    assert grown(before, after, "retrieval_rpc_requests_total", code="INVALID_ARGUMENT", **rpc) == 1
    assert after[("retrieval_rpc_in_flight", frozenset(rpc.items()))] == 0
    assert grown(before, after, "retrieval_errors_total",
                 operation="retrieve", error="InvalidRequestError") == 1  # fmt: skip
    for stage in ("search", "embed", "dense", "keyword", "fuse", "fetch"):
        assert grown(before, after, "retrieval_stage_duration_seconds_count", stage=stage) == 3
        assert grown(before, after, "retrieval_stage_duration_seconds_sum", stage=stage) > 0
    assert grown(before, after, "retrieval_matches_count") == 3
    cache_lookups = sum(
        grown(before, after, "retrieval_result_cache_lookups_total", result=result)
        for result in ("hit", "miss")
    )
    assert cache_lookups == 3


async def test_a_call_is_traced_with_one_span_per_stage(
    stub: retrieval_pb2_grpc.RetrievalServiceStub, spans: InMemorySpanExporter
) -> None:
    spans.clear()
    response = await stub.Retrieve(
        pb.RetrieveRequest(
            query="blister blight", namespace=NAMESPACE, options=pb.RetrievalOptions(rerank=False)
        ),
        metadata=(("x-correlation-id", "trace-me-1"),),
    )
    finished = {span.name: span for span in spans.get_finished_spans()}
    rpc = finished[f"rpc {SERVICE_NAME}/Retrieve"]
    call = finished["retrieval.retrieve"]
    stages = {name: span for name, span in finished.items() if name.startswith("stage.")}

    assert call.parent.span_id == rpc.context.span_id
    assert {name.removeprefix("stage.") for name in stages} <= set(response.stage_ms)
    assert {"query", "search", "fuse", "fetch"} <= {name.removeprefix("stage.") for name in stages}
    assert all(span.parent.span_id == call.context.span_id for span in stages.values())
    assert len(spans.get_finished_spans()) == len(stages) + 2
    assert {span.attributes["retrieval.correlation_id"] for span in finished.values()} == {
        "trace-me-1"
    }
    assert call.attributes["retrieval.matches"] == response.total_matches


VALIDATIONS = [
    ValidationRequest(namespace=NAMESPACE, top_k=1),
    ValidationRequest(
        namespace=NAMESPACE,
        cases=(
            ValidationCase(query="blister blight", expected_document_ids=("blister-blight",)),
            ValidationCase(
                id="frost-in-the-wrong-place",
                query="frost on tea bushes",
                expected_document_ids=("grading",),
                expected_keywords=("thatch", "hail", "sleet"),
                min_score=0.99,
                query_type=QueryType.EDGE_CASE,
                domains=("weather_patterns",),
            ),
        ),
        expected_metadata=("region",),
        success_criterion=0.5,
        top_k=2,
    ),
]


@pytest.mark.parametrize("asked", VALIDATIONS, ids=["smoke", "cases"])
async def test_validate_gives_what_the_in_process_call_gives(
    application: Application, client: RetrievalClient, asked: ValidationRequest
) -> None:
    local = await application.validation.validate(asked)
    remote = await client.validate(asked)
    assert remote == local
    assert remote.passed
    assert remote.total_queries == len(asked.cases or DOCUMENTS)
    assert remote.vector_count == remote.chunk_count > 0


async def test_validate_reports_why_a_case_failed(client: RetrievalClient) -> None:
    report = await client.validate(VALIDATIONS[1])
    [failed] = report.failed_queries
    assert (failed.id, failed.query_type) == ("frost-in-the-wrong-place", QueryType.EDGE_CASE)
    assert failed.reasons[0] == "expected document grading not in top 2 (found frost)"
    assert failed.reasons[1] == "1 of 3 keywords in the top 3; missing: hail, sleet"
    assert failed.reasons[2].startswith("top score ")
    assert report.metadata_completeness == 0.5
    assert report.by_query_type["edge_case"].success_rate == 0.0


@pytest.mark.parametrize(
    ("request_message", "code", "detail"),
    [
        pytest.param(
            pb.ValidateRequest(namespace="never-written"),
            grpc.StatusCode.NOT_FOUND,
            "never-written",
            id="unknown-namespace",
        ),
        pytest.param(
            pb.ValidateRequest(), grpc.StatusCode.INVALID_ARGUMENT, "namespace: ", id="no-namespace"
        ),
        pytest.param(
            pb.ValidateRequest(
                namespace=NAMESPACE,
                cases=[pb.ValidationCase(query="frost", query_type="opinion")],
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "cases.0.query_type: ",
            id="query-type",
        ),
        pytest.param(
            pb.ValidateRequest(namespace=NAMESPACE, success_criterion=1.5),
            grpc.StatusCode.INVALID_ARGUMENT,
            "success_criterion: ",
            id="criterion",
        ),
    ],
)
async def test_bad_validate_is_refused_with_its_status(
    stub: retrieval_pb2_grpc.RetrievalServiceStub,
    request_message: pb.ValidateRequest,
    code: grpc.StatusCode,
    detail: str,
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await stub.Validate(request_message)
    assert raised.value.code() is code
    assert detail in raised.value.details()
    await still_serving(stub)
