"""Tenants over a real loopback server: tokens scoped to namespaces and scopes, from a file."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import grpc
import pytest
import structlog
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2, health_pb2_grpc
from pydantic import SecretStr

from retrieval.domain.models import RagDocument, RetrievalQuery
from retrieval.domain.tenants import token_digest
from retrieval.errors import (
    BackendNotConfiguredError,
    ConfigurationError,
    NotAuthorisedError,
    PermissionDeniedError,
    TokensFileError,
)
from retrieval.grpc import GrpcSettings, RetrievalClient, RetryPolicy, create_server
from retrieval.lifecycle import Application, running
from retrieval.logging import correlation_scope
from retrieval.service.ingestion.outcomes import Outcome
from retrieval.settings import Settings
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb
from retrieval_proto.retrieval.v1 import retrieval_pb2_grpc
from retrieval_testkit.container import in_memory_container

DEFAULT = "default"
NAMESPACES = ("team-a-docs", "team-a-notes", "team-b-docs", DEFAULT)
NO_RETRIES = RetryPolicy(attempts=1)
DOCUMENT = RagDocument(
    document_id="frost",
    title="Frost",
    domain="weather_patterns",
    content="Ground frost scorches the plucking table of tea bushes on still winter nights.",
)
TOKENS = {
    "reader-a": ("reader-a-secret", ["team-a-*"], ["read"]),
    "writer-a": ("writer-a-secret", ["team-a-*"], ["read", "write"]),
    "writer-b": ("writer-b-secret", ["team-b-docs"], ["write"]),
    "default-reader": ("default-reader-secret", [DEFAULT], ["read"]),
    "ops": ("ops-secret", ["*"], ["admin"]),
}
AUTH_TOKEN = SecretStr("auth-token-secret")
SECRETS = [secret for secret, _, _ in TOKENS.values()] + [AUTH_TOKEN.get_secret_value()]


def tokens_file(path: Path) -> Path:
    entries = [
        {"name": name, "sha256": token_digest(secret), "namespaces": patterns, "scopes": scopes}
        for name, (secret, patterns, scopes) in TOKENS.items()
    ]
    path.write_text(json.dumps(entries))
    return path


@pytest.fixture
async def application(tmp_path: Path) -> AsyncIterator[Application]:
    settings = Settings(data_dir=tmp_path, default_namespace=DEFAULT)
    async with running(settings, in_memory_container(settings)) as app:
        for namespace in NAMESPACES:
            await app.ingestion.ingest([DOCUMENT], namespace)
        yield app


@asynccontextmanager
async def served(app: Application, settings: GrpcSettings, address: str) -> AsyncIterator[int]:
    server, port = await create_server(app, address, settings)
    try:
        yield port
    finally:
        await server.stop(None)


@pytest.fixture
async def port(application: Application, tmp_path: Path) -> AsyncIterator[int]:
    settings = GrpcSettings(
        tokens_file=tokens_file(tmp_path / "tokens.json"), auth_token=AUTH_TOKEN
    )
    async with served(application, settings, "127.0.0.1:0") as port:
        yield port


@asynccontextmanager
async def client_of(port: int, name: str) -> AsyncIterator[RetrievalClient]:
    token = AUTH_TOKEN if name == "auth-token" else SecretStr(TOKENS[name][0])
    async with RetrievalClient.connect(
        f"127.0.0.1:{port}", token=token, retry=NO_RETRIES, timeout=5
    ) as client:
        yield client


CALLS: list[tuple[str, Message]] = [
    ("Retrieve", pb.RetrieveRequest(query="frost", namespace="team-a-docs")),
    ("BuildContext", pb.BuildContextRequest(retrieval=pb.RetrieveRequest(query="frost"))),
    ("Answer", pb.AnswerRequest(retrieval=pb.RetrieveRequest(query="frost"))),
    ("Validate", pb.ValidateRequest(namespace="team-a-docs")),
    ("GetStats", pb.GetStatsRequest()),
    ("IngestDocuments", pb.IngestDocumentsRequest(namespace="team-a-docs")),
    ("DeleteDocument", pb.DeleteDocumentRequest(document_id="frost", namespace="team-a-docs")),
    ("DeleteNamespace", pb.DeleteNamespaceRequest(namespace="team-a-docs")),
]


@pytest.mark.parametrize(
    "metadata",
    [(), (("authorization", "Bearer not-a-known-token"),)],
    ids=["no-token", "unknown-token"],
)
async def test_every_call_but_health_needs_a_known_token(
    port: int, application: Application, metadata: tuple[tuple[str, str], ...]
) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
        for method, request in CALLS:
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await getattr(stub, method)(request, metadata=metadata)
            assert raised.value.code() is grpc.StatusCode.UNAUTHENTICATED, method
        streamed = pb.AnswerStreamRequest(retrieval=pb.RetrieveRequest(query="frost"))
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.AnswerStream(streamed, metadata=metadata).read()
        assert raised.value.code() is grpc.StatusCode.UNAUTHENTICATED
        health = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        assert health.status == health_pb2.HealthCheckResponse.SERVING
    assert (await application.stats.namespace("team-a-docs")).chunk_count == 1
    async with RetrievalClient.connect(f"127.0.0.1:{port}", retry=NO_RETRIES) as anonymous:
        with pytest.raises(NotAuthorisedError) as refused:
            await anonymous.stats()
        assert not isinstance(refused.value, PermissionDeniedError)


async def test_a_tenant_reads_its_namespaces_and_no_other(port: int) -> None:
    async with client_of(port, "reader-a") as reader:
        for namespace in ("team-a-docs", "team-a-notes"):
            assert (await reader.retrieve("frost", namespace=namespace)).total_matches == 1
        with pytest.raises(PermissionDeniedError) as refused:
            await reader.retrieve("frost", namespace="team-b-docs")
        assert "namespace 'team-b-docs'" in str(refused.value)
        assert all(secret not in str(refused.value) for secret in SECRETS)
        query = pb.RetrieveRequest(query="frost", namespace="team-b-docs")
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
            metadata = (("authorization", f"Bearer {TOKENS['reader-a'][0]}"),)
            for method, request in [
                ("Retrieve", query),
                ("BuildContext", pb.BuildContextRequest(retrieval=query)),
                ("Answer", pb.AnswerRequest(retrieval=query)),
                ("Validate", pb.ValidateRequest(namespace="team-b-docs")),
            ]:
                with pytest.raises(grpc.aio.AioRpcError) as raised:
                    await getattr(stub, method)(request, metadata=metadata)
                assert raised.value.code() is grpc.StatusCode.PERMISSION_DENIED, method
                assert "team-b-docs" in (raised.value.details() or "")


async def test_a_streamed_answer_is_a_read_of_the_namespace_asked(port: int) -> None:
    def asked(namespace: str) -> RetrievalQuery:
        return RetrievalQuery(query="frost", namespace=namespace)

    async with client_of(port, "reader-a") as reader:
        with pytest.raises(PermissionDeniedError, match="namespace 'team-b-docs'"):
            await anext(reader.answer_stream(asked("team-b-docs")))
        with pytest.raises(BackendNotConfiguredError, match="RETRIEVAL_LLM_BASE_URL"):
            await anext(reader.answer_stream(asked("team-a-docs")))
    async with client_of(port, "writer-b") as writer:
        with pytest.raises(PermissionDeniedError, match="scope 'read'"):
            await anext(writer.answer_stream(asked("team-b-docs")))


async def test_a_read_only_token_cannot_write_and_a_write_only_token_cannot_read(
    port: int, application: Application
) -> None:
    async with client_of(port, "reader-a") as reader:
        with pytest.raises(PermissionDeniedError, match="scope 'write'"):
            await reader.ingest_documents([DOCUMENT], namespace="team-a-docs")
        with pytest.raises(PermissionDeniedError, match="scope 'write'"):
            await reader.delete_document("frost", namespace="team-a-docs")
    async with client_of(port, "writer-b") as writer:
        with pytest.raises(PermissionDeniedError, match="scope 'read'"):
            await writer.retrieve("frost", namespace="team-b-docs")
        assert await writer.delete_document("frost", namespace="team-b-docs") == 1
    assert (await application.stats.namespace("team-a-docs")).chunk_count == 1
    assert (await application.stats.namespace("team-b-docs")).chunk_count == 0


async def test_a_writer_writes_where_its_glob_matches_but_deletes_no_namespace(
    port: int, application: Application
) -> None:
    async with client_of(port, "writer-a") as writer:
        [outcome] = await writer.ingest_documents([DOCUMENT], namespace="team-a-new")
        assert outcome.outcome is Outcome.CREATED
        assert (await writer.retrieve("frost", namespace="team-a-new")).total_matches == 1
        with pytest.raises(PermissionDeniedError, match="namespace 'team-b-docs'"):
            await writer.ingest_documents([DOCUMENT], namespace="team-b-docs")
        with pytest.raises(PermissionDeniedError, match="scope 'admin'"):
            await writer.delete_namespace("team-a-new")
        assert await writer.delete_document("frost", namespace="team-a-new") == 1
    assert (await application.stats.namespace("team-a-docs")).chunk_count == 1


@pytest.mark.parametrize("name", ["ops", "auth-token"])
async def test_an_admin_token_does_everything_everywhere(port: int, name: str) -> None:
    async with client_of(port, name) as admin:
        assert (await admin.retrieve("frost", namespace="team-b-docs")).total_matches == 1
        assert (await admin.retrieve("frost")).total_matches == 1
        await admin.ingest_documents([DOCUMENT], namespace="scratch")
        stats = await admin.stats()
        assert {ns.namespace for ns in stats.namespaces} == {*NAMESPACES, "scratch"}
        assert await admin.delete_namespace("scratch") == 1
        assert await admin.delete_document("frost", namespace="team-b-docs") == 1


async def test_stats_show_a_tenant_its_own_namespaces_only(
    port: int, application: Application
) -> None:
    async with client_of(port, "reader-a") as reader:
        mine = await reader.stats()
    assert [ns.namespace for ns in mine.namespaces] == ["team-a-docs", "team-a-notes"]
    assert mine.total_vector_count == sum(ns.vector_count for ns in mine.namespaces)
    assert mine.total_chunk_count == sum(ns.chunk_count or 0 for ns in mine.namespaces)
    assert mine.footprints == ()
    async with client_of(port, "ops") as admin:
        everything = await admin.stats()
    assert everything == await application.stats.collect()
    assert everything.total_vector_count is not None
    assert everything.total_vector_count > (mine.total_vector_count or 0)
    async with client_of(port, "writer-b") as writer:
        with pytest.raises(PermissionDeniedError, match="scope 'read'"):
            await writer.stats()


async def test_the_default_namespace_is_checked_like_any_other(port: int) -> None:
    async with client_of(port, "reader-a") as reader:
        with pytest.raises(PermissionDeniedError, match=f"namespace '{DEFAULT}'"):
            await reader.retrieve("frost")
    async with client_of(port, "writer-a") as writer:
        with pytest.raises(PermissionDeniedError, match=f"namespace '{DEFAULT}'"):
            await writer.ingest_documents([DOCUMENT])
    async with client_of(port, "default-reader") as default_reader:
        result = await default_reader.retrieve("frost")
        assert (result.namespace, result.total_matches) == (DEFAULT, 1)
        with pytest.raises(PermissionDeniedError):
            await default_reader.retrieve("frost", namespace="team-a-docs")


async def test_writes_are_logged_with_the_token_name_and_tokens_never(port: int) -> None:
    with structlog.testing.capture_logs(
        processors=[structlog.contextvars.merge_contextvars]
    ) as logs:
        async with client_of(port, "writer-a") as writer:
            with correlation_scope("tenant-write"):
                await writer.ingest_documents([DOCUMENT], namespace="team-a-logged")
            await writer.delete_document("frost", namespace="team-a-logged")
        async with client_of(port, "reader-a") as reader:
            with pytest.raises(PermissionDeniedError):
                await reader.ingest_documents([DOCUMENT], namespace="team-a-logged")
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
            with pytest.raises(grpc.aio.AioRpcError):
                await stub.GetStats(
                    pb.GetStatsRequest(), metadata=(("authorization", "Bearer guessed-secret"),)
                )
    writes = [entry for entry in logs if entry["event"] == "grpc.write"]
    assert [(entry["token_name"], entry["method"]) for entry in writes] == [
        ("writer-a", "IngestDocuments"),
        ("writer-a", "DeleteDocument"),
    ]
    assert writes[0]["namespace"] == "team-a-logged"
    of_the_ingest = [entry for entry in logs if entry.get("correlation_id") == "tenant-write"]
    assert len(of_the_ingest) > 1
    assert all(entry.get("token_name") == "writer-a" for entry in of_the_ingest)
    [denied] = [entry for entry in logs if entry["event"] == "grpc.permission_denied"]
    assert (denied["token_name"], denied["scope"]) == ("reader-a", "write")
    assert any(entry["event"] == "grpc.unauthenticated" for entry in logs)
    logged = repr(logs)
    assert all(secret not in logged for secret in [*SECRETS, "guessed-secret"])


def invalid(entry: dict[str, Any]) -> str:
    return json.dumps([entry])


VALID = {"name": "team-a", "sha256": "a" * 64, "namespaces": ["team-a-*"], "scopes": ["read"]}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{not json", "not valid JSON"),
        (invalid({"name": "team-a", "namespaces": ["x"], "scopes": ["read"]}),
         "entry 0 ('team-a'): sha256: Field required"),
        (invalid(VALID | {"scopes": ["read", "owner"]}), "scopes.1: Input should be"),
        (json.dumps([VALID, VALID | {"sha256": "b" * 64}]), "the name 'team-a' is used 2 times"),
        (invalid(VALID | {"sha256": "a" * 63}), "sha256: must be the 64 hex digits"),
    ],
    ids=["bad-json", "missing-field", "unknown-scope", "duplicate-name", "short-sha256"],
)  # fmt: skip
async def test_an_invalid_tokens_file_stops_the_start_up(
    application: Application, tmp_path: Path, text: str, problem: str
) -> None:
    path = tmp_path / "tokens.json"
    path.write_text(text)
    with pytest.raises(TokensFileError) as raised:
        await create_server(application, "127.0.0.1:0", GrpcSettings(tokens_file=path))
    assert str(raised.value).startswith(f"{path}: ")
    assert problem in str(raised.value)


async def test_without_tokens_the_server_listens_on_loopback_only(
    application: Application, tmp_path: Path
) -> None:
    exposed = GrpcSettings(host="0.0.0.0", port=0)
    with pytest.raises(ConfigurationError, match=r"refusing to serve 0\.0\.0\.0:0 without"):
        await create_server(application, exposed.address, exposed)
    allowed = GrpcSettings(host="0.0.0.0", port=0, allow_unauthenticated=True)
    tokened = GrpcSettings(host="0.0.0.0", port=0, tokens_file=tokens_file(tmp_path / "t.json"))
    for settings, token in [(allowed, None), (tokened, SecretStr(TOKENS["ops"][0]))]:
        async with (
            served(application, settings, settings.address) as port,
            RetrievalClient.connect(f"127.0.0.1:{port}", token=token, retry=NO_RETRIES) as client,
        ):
            assert (await client.retrieve("frost")).total_matches == 1


async def test_the_serve_command_refuses_every_interface_without_a_token(tmp_path: Path) -> None:
    cli = Path(sys.executable).with_name("retrieval")
    env = os.environ | {
        "RETRIEVAL_DATA_DIR": str(tmp_path / "data"),
        "RETRIEVAL_GRPC_HOST": "0.0.0.0",
        "RETRIEVAL_GRPC_PORT": "0",
    }
    for name in (
        "RETRIEVAL_MONGODB_URI",
        "RETRIEVAL_GRPC_AUTH_TOKEN",
        "RETRIEVAL_GRPC_TOKENS_FILE",
        "RETRIEVAL_GRPC_ALLOW_UNAUTHENTICATED",
    ):
        env.pop(name, None)
    process = await asyncio.create_subprocess_exec(
        str(cli), "serve", cwd=tmp_path, env=env, stderr=asyncio.subprocess.PIPE
    )
    _, stderr = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode == 1
    printed = " ".join(stderr.decode().split())
    assert "Traceback" not in printed
    assert "refusing to serve 0.0.0.0:0 without authentication" in printed
    assert "RETRIEVAL_GRPC_ALLOW_UNAUTHENTICATED=true" in printed
