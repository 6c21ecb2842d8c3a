"""Every write over gRPC against a model or store that stops answering: the server answers
DEADLINE_EXCEEDED itself before the caller's deadline, and once the stall ends the server's
own repair leaves the stores audit-clean at the version the ledger holds (docs/reliability.md,
"A write stopped by its deadline")."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
import structlog

from retrieval.domain.models import RagDocument
from retrieval.domain.provenance import Source
from retrieval.grpc import GrpcSettings, create_server
from retrieval.grpc.document_conversions import document_to_proto
from retrieval.grpc.errors import TIMEOUT_MESSAGE
from retrieval.grpc.metadata import CORRELATION_ID_KEY, metadata_value
from retrieval.lifecycle import Application, running
from retrieval.settings import Settings
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb
from retrieval_proto.retrieval.v1 import retrieval_pb2_grpc
from retrieval_testkit import (
    HashEmbedder,
    InMemoryChunkRepository,
    InMemoryDocumentLedger,
    InMemoryNamespaceGenerations,
    InMemoryVectorIndex,
)
from retrieval_testkit.container import in_memory_container
from retrieval_testkit.stalls import Stall
from retrieval_testkit.waiting import until

NAMESPACE = "deadlines"
DEADLINE_S = 2.0
ROOT = "/notes/weather"
FROST = RagDocument(
    document_id="frost",
    title="Frost",
    domain="weather_patterns",
    content="Ground frost scorches the plucking table of tea bushes on still winter nights.",
    source=Source(uri=f"{ROOT}/frost.md", root=ROOT),
)
FROST_AGAIN = FROST.model_copy(
    update={"content": "Hoar frost settles on the hedges of the upper estate after clear dusk."}
)
Stub = retrieval_pb2_grpc.RetrievalServiceStub
Write = Callable[[Stub], Awaitable[object]]

WRITES: dict[str, Write] = {
    "IngestDocuments": lambda stub: stub.IngestDocuments(
        pb.IngestDocumentsRequest(namespace=NAMESPACE, documents=[document_to_proto(FROST_AGAIN)]),
        timeout=DEADLINE_S,
    ),
    "SyncDocuments": lambda stub: stub.SyncDocuments(
        pb.SyncDocumentsRequest(
            namespace=NAMESPACE, documents=[document_to_proto(FROST_AGAIN)], roots=[ROOT]
        ),
        timeout=DEADLINE_S,
    ),
    "DeleteDocument": lambda stub: stub.DeleteDocument(
        pb.DeleteDocumentRequest(namespace=NAMESPACE, document_id=FROST.document_id),
        timeout=DEADLINE_S,
    ),
    "DeleteDocuments": lambda stub: stub.DeleteDocuments(
        pb.DeleteDocumentsRequest(namespace=NAMESPACE, source_prefix=ROOT), timeout=DEADLINE_S
    ),
    "DeleteNamespace": lambda stub: stub.DeleteNamespace(
        pb.DeleteNamespaceRequest(namespace=NAMESPACE), timeout=DEADLINE_S
    ),
}

STALLED = {
    "model": ("model_embedder",),
    "index": ("vector_index",),
    "pinecone": ("model_embedder", "vector_index"),
    "mongodb": ("chunk_repository", "document_ledger", "namespace_generations"),
}
"""What stops answering: Pinecone stopped is its embedding API and its index; MongoDB stopped
is the chunk texts, the ledger and the namespaces' generations."""


def doubles() -> dict[str, object]:
    return {
        "model_embedder": HashEmbedder(),
        "vector_index": InMemoryVectorIndex(),
        "chunk_repository": InMemoryChunkRepository(),
        "document_ledger": InMemoryDocumentLedger(),
        "namespace_generations": InMemoryNamespaceGenerations(),
    }


@dataclass
class Served:
    app: Application
    stub: Stub
    stall: Stall


@asynccontextmanager
async def served(tmp_path: Path, stalled: str) -> AsyncIterator[Served]:
    """A server holding FROST, whose ``stalled`` doubles stop answering on ``stall.begin``;
    the stall is lifted before the server stops."""
    stall = Stall()
    replacements = doubles()
    for name in STALLED[stalled]:
        replacements[name] = stall.wrap(replacements[name])
    settings = Settings(data_dir=tmp_path, health_interval_s=0.2, health_probe_timeout_s=0.5)
    async with running(settings, in_memory_container(settings, **replacements)) as app:
        await app.ingestion.ingest([FROST], NAMESPACE)
        server, port = await create_server(app, "127.0.0.1:0", GrpcSettings(_env_file=None))
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                yield Served(app, Stub(channel), stall)
        finally:
            stall.lift()
            await server.stop(None)


async def answered_by_the_server_in_time(write: Write, stub: Stub) -> None:
    started = time.monotonic()
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await write(stub)
    assert time.monotonic() - started < DEADLINE_S
    error = raised.value
    assert (error.code(), error.details()) == (grpc.StatusCode.DEADLINE_EXCEEDED, TIMEOUT_MESSAGE)
    assert metadata_value(error.trailing_metadata(), CORRELATION_ID_KEY)


async def repaired(app: Application) -> bool:
    report = await app.repair.reconcile(NAMESPACE, dry_run=True)
    return report.is_consistent


async def stored_content(app: Application) -> str | None:
    """FROST's content as the namespace holds it now; None when it holds no FROST."""
    if FROST.document_id not in {d.document_id for d in await app.library.documents(NAMESPACE)}:
        return None
    stored = await app.library.document(FROST.document_id, NAMESPACE)
    text = " ".join(chunk.content for chunk in stored.chunks)
    return next(d.content for d in (FROST, FROST_AGAIN) if d.content in text)


def captured_logs() -> AbstractContextManager[list[dict]]:
    return structlog.testing.capture_logs(processors=[structlog.contextvars.merge_contextvars])


@pytest.mark.parametrize(
    ("method", "stalled", "kept"),
    [
        ("IngestDocuments", "model", True),
        ("IngestDocuments", "index", True),
        ("IngestDocuments", "pinecone", True),
        ("IngestDocuments", "mongodb", True),
        ("SyncDocuments", "pinecone", True),
        ("DeleteDocument", "index", False),
        ("DeleteDocument", "mongodb", True),
        ("DeleteDocuments", "index", False),
        ("DeleteNamespace", "index", False),
        ("DeleteNamespace", "mongodb", True),
    ],
)
async def test_a_stalled_write_is_answered_in_time_and_repaired_as_documented(
    tmp_path: Path, method: str, stalled: str, kept: bool
) -> None:
    """Stopped before its commit point, a write leaves FROST as it was; stopped after it
    (a delete whose records are retired, a namespace whose records are dropped), the repair
    finishes it once the stall ends."""
    async with served(tmp_path, stalled) as server:
        server.stall.begin()
        await answered_by_the_server_in_time(WRITES[method], server.stub)
        server.stall.lift()
        await until(lambda: repaired(server.app), "the server to repair what the write left")
        assert await stored_content(server.app) == (FROST.content if kept else None)


async def test_a_write_stopped_by_its_deadline_is_logged_as_a_backend_failure(
    tmp_path: Path,
) -> None:
    async with served(tmp_path, "pinecone") as server:
        server.stall.begin()
        with captured_logs() as logs:
            await answered_by_the_server_in_time(WRITES["IngestDocuments"], server.stub)
    failures = [entry for entry in logs if entry["event"] == "grpc.backend_failed"]
    assert [(f["method"], f["code"]) for f in failures] == [
        ("IngestDocuments", "DEADLINE_EXCEEDED")
    ]
    assert failures[0]["correlation_id"]
