"""No credential leaves the process in a log line, an error message or a repr.

A Pinecone API key, a MongoDB password, a language model's API key and a gRPC bearer token,
each a recognisable value, are configured; every backend is a loopback stand-in that refuses
them (MongoDB: a port nothing listens on; the model's server even quotes the key it was
sent back in its error). Start-up, a failing call to each backend, refused and failing gRPC
calls, and the repr and str of the settings, the adapters and every error are collected with
every log record (the service's and every library's, DEBUG included): none holds a secret.
"""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest
import structlog
from pydantic import SecretStr

from retrieval.adapters.no_reranker import NoReranker
from retrieval.domain.chat import ChatMessage
from retrieval.domain.models import RagDocument, RetrievalQuery
from retrieval.errors import RetrievalError
from retrieval.grpc import GrpcSettings, RetrievalClient, create_server
from retrieval.lifecycle import resolve, running
from retrieval.settings import Settings
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb
from retrieval_proto.retrieval.v1 import retrieval_pb2_grpc
from retrieval_testkit import (
    InMemoryKeywordIndex,
    OpenAiStandIn,
)
from retrieval_testkit.container import in_memory_container, without_mongodb
from retrieval_testkit.openai_standin import Fault
from retrieval_testkit.pinecone_standin import PineconeStandIn

PINECONE_KEY = "pcsk_CANARYpinecone0451"
MONGO_PASSWORD = "CANARYmongo0452"
LLM_KEY = "sk-CANARYllm0453"
GRPC_TOKEN = "CANARYgrpc0454"
SECRETS = (PINECONE_KEY, MONGO_PASSWORD, LLM_KEY, GRPC_TOKEN)
NAMESPACE = "secrets"
DOCUMENT = RagDocument(
    document_id="frost",
    title="Frost",
    domain="weather_patterns",
    content="Ground frost scorches the plucking table of tea bushes on still winter nights.",
)


class Evidence:
    """Every text the test saw: error messages and reprs, replies, results."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def error(self, error: BaseException) -> None:
        """The error and every error it was raised from or while handling."""
        seen: BaseException | None = error
        while seen is not None:
            self.texts += [str(seen), repr(seen), repr(seen.args)]
            seen = seen.__cause__ or seen.__context__

    def add(self, *values: object) -> None:
        self.texts += [text for value in values for text in (str(value), repr(value))]


@pytest.fixture
def evidence() -> Evidence:
    return Evidence()


@pytest.fixture
def refused_port() -> int:
    """A loopback port nothing listens on: MongoDB refuses every connection."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def pinecone() -> Iterator[PineconeStandIn]:
    with PineconeStandIn(dimension=1024, api_key="another-key") as standin:
        yield standin


@pytest.fixture
def pinecone_sparse() -> Iterator[PineconeStandIn]:
    with PineconeStandIn(vector_type="sparse", api_key="another-key") as standin:
        yield standin


@pytest.fixture
def llm_server() -> Iterator[OpenAiStandIn]:
    """Refuses every key but its own, quoting the one it was sent in the error."""
    quoted = json.dumps({"error": {"message": f"Incorrect API key provided: {LLM_KEY}"}})
    with OpenAiStandIn(api_key="another-key") as standin:
        standin.inject(Fault(status=401, body=quoted), count=100)
        yield standin


@pytest.fixture
def settings(
    tmp_path: Path,
    refused_port: int,
    pinecone: PineconeStandIn,
    pinecone_sparse: PineconeStandIn,
    llm_server: OpenAiStandIn,
) -> Settings:
    return Settings(
        data_dir=tmp_path,
        index_backend="pinecone",
        embedder_backend="pinecone",
        rerank_backend="pinecone",
        search={"rerank": True},
        pinecone_api_key=PINECONE_KEY,
        pinecone_index_host=pinecone.url,
        pinecone_sparse_index_host=pinecone_sparse.url,
        pinecone_control_host=pinecone.url,
        pinecone_request_timeout_s=1.0,
        pinecone_call_timeout_s=2.0,
        mongodb_uri=f"mongodb://retrieval:{MONGO_PASSWORD}@127.0.0.1:{refused_port}/?authSource=admin",
        mongodb_timeout_ms=200,
        mongodb_operation_timeout_ms=400,
        llm_base_url=llm_server.base_url,
        llm_api_key=LLM_KEY,
        llm_model="standin-model",
        llm_max_attempts=1,
        llm_request_timeout_s=1.0,
        llm_call_timeout_s=2.0,
    )


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> Iterator[list[dict]]:
    """Every structlog event; the standard library's records, DEBUG up, go to ``caplog``."""
    caplog.set_level(logging.DEBUG)
    with structlog.testing.capture_logs() as events:
        yield events


@pytest.fixture
async def served(settings: Settings) -> AsyncIterator[int]:
    """A server taking ``GRPC_TOKEN`` on in-memory stores; its language model refuses."""
    container = in_memory_container(
        settings, keyword_index=InMemoryKeywordIndex(), reranker=NoReranker()
    )
    async with running(settings, container) as app:
        await app.ingestion.ingest([DOCUMENT], NAMESPACE)
        server, port = await create_server(app, "127.0.0.1:0", GrpcSettings(auth_token=GRPC_TOKEN))
        try:
            yield port
        finally:
            await server.stop(None)


def assert_clean(evidence: Evidence, events: list[dict], caplog: pytest.LogCaptureFixture) -> None:
    assert events or caplog.records, "nothing was logged: nothing was checked"
    texts = [
        *evidence.texts,
        *map(str, events),
        caplog.text,
        *(record.getMessage() for record in caplog.records),
    ]
    leaked = {secret for secret in SECRETS for text in texts if secret in text}
    assert not leaked, [text for text in texts if any(secret in text for secret in leaked)][:3]


async def test_start_up_against_a_refusing_mongodb_leaks_nothing(
    settings: Settings,
    logs: list[dict],
    caplog: pytest.LogCaptureFixture,
    evidence: Evidence,
) -> None:
    with pytest.raises(RetrievalError) as raised:
        async with running(settings):
            pass
    evidence.error(raised.value)
    evidence.add(settings, settings.model_dump(), settings.model_dump_json())
    grpc_settings = GrpcSettings(auth_token=GRPC_TOKEN)
    evidence.add(grpc_settings, grpc_settings.model_dump(), grpc_settings.model_dump_json())
    logging.getLogger("retrieval.test").error("start-up failed", exc_info=raised.value)
    assert_clean(evidence, logs, caplog)


async def test_calls_to_refusing_backends_leak_nothing(
    settings: Settings,
    pinecone: PineconeStandIn,
    llm_server: OpenAiStandIn,
    logs: list[dict],
    caplog: pytest.LogCaptureFixture,
    evidence: Evidence,
) -> None:
    container = without_mongodb(settings)
    async with running(settings, container) as app:
        llm = await resolve(container.llm)
        for call in (
            app.stats.probe(),
            app.retrieval.retrieve("frost", namespace=NAMESPACE),
            llm.complete([ChatMessage(role="user", content="What scorches tea bushes?")]),
        ):
            try:
                evidence.add(await call)
            except RetrievalError as error:
                evidence.error(error)
        outcomes = await app.ingestion.ingest([DOCUMENT], NAMESPACE)
        assert outcomes[0].outcome == "failed"
        evidence.add(outcomes, await app.stats.collect())
        with pytest.raises(RetrievalError) as raised:
            await create_server(app, "127.0.0.1:0", GrpcSettings(auth_token=GRPC_TOKEN))
        evidence.error(raised.value)
        adapters = [container.pinecone(), container.pinecone_sparse(), llm]
        adapters += [
            await resolve(provider)
            for provider in (
                container.backend_index,
                container.keyword_index,
                container.model_embedder,
                container.reranker,
            )
        ]
        evidence.add(app.settings, *adapters)
    assert {request.status for request in pinecone.requests} == {401}
    assert llm_server.requests, "the model was never asked"
    assert_clean(evidence, logs, caplog)


async def test_grpc_refusals_and_failures_leak_nothing(
    served: int,
    llm_server: OpenAiStandIn,
    logs: list[dict],
    caplog: pytest.LogCaptureFixture,
    evidence: Evidence,
) -> None:
    request = pb.RetrieveRequest(query="frost", namespace=NAMESPACE)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{served}") as channel:
        stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
        for refused in ("", f"Bearer {GRPC_TOKEN}x", f"Basic {GRPC_TOKEN}", GRPC_TOKEN):
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await stub.Retrieve(request, metadata=(("authorization", refused),))
            assert raised.value.code() is grpc.StatusCode.UNAUTHENTICATED
            evidence.add(raised.value.details(), raised.value.trailing_metadata())
        granted = (("authorization", f"Bearer {GRPC_TOKEN}"),)
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.Answer(pb.AnswerRequest(retrieval=request), metadata=granted)
        evidence.add(raised.value.code(), raised.value.details(), raised.value.trailing_metadata())
    async with RetrievalClient.connect(
        f"127.0.0.1:{served}", token=SecretStr(GRPC_TOKEN), timeout=5
    ) as client:
        evidence.add(client)
        with pytest.raises(RetrievalError) as failed:
            await client.answer(RetrievalQuery(query="frost", namespace=NAMESPACE))
        evidence.error(failed.value)
    assert llm_server.requests, "the model was never asked"
    assert_clean(evidence, logs, caplog)
