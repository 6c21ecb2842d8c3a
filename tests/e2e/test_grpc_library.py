"""A knowledge base kept over gRPC: provenance on every match and citation, filters by source
and section, ids that clash, SyncDocuments, DeleteDocuments and ListDocuments, and who may
call them. One loopback server with tenant tokens, on the container with in-memory stores."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

import grpc
import pytest
from pydantic import SecretStr

from retrieval.adapters.files.document_files import read_documents
from retrieval.domain.models import RagDocument, RetrievalQuery
from retrieval.domain.provenance import Source
from retrieval.domain.tenants import token_digest
from retrieval.errors import InvalidRequestError, MassDeleteError, PermissionDeniedError
from retrieval.grpc import GrpcSettings, PathSync, RetrievalClient, RetryPolicy, create_server
from retrieval.grpc.document_conversions import document_to_proto, documents_from_proto
from retrieval.grpc.server import SERVICE_NAME
from retrieval.lifecycle import Application, running
from retrieval.service.ingestion.outcomes import Outcome
from retrieval.service.ingestion.requests import SyncRequest
from retrieval.settings import Settings
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb
from retrieval_proto.retrieval.v1 import retrieval_pb2_grpc
from retrieval_testkit.container import in_memory_container
from retrieval_testkit.sample_files import pdf

NS = "kb"
DOMAIN = "tea_cultivation"
FILES = {
    "guide.md": "# Pruning guide\n\n## Timing\n\nPrune tea bushes every four years in the cool "
    "season.\n\n## Tools\n\nSharp knives leave clean cuts that heal before the rains.",
    "notes.txt": "Shade trees\n\nSilver oak shade trees keep the garden cool and feed the soil.",
    "sub/withering.md": "# Withering\n\nFresh leaf is withered for fourteen to eighteen hours.",
    "sub/rolling.md": "# Rolling\n\nWithered leaf is rolled to break its cells and oxidise.",
}
PDF = pdf("Frost protection", "Thatch young tea bushes with grass on clear frosty nights.")
TOKENS = {
    "editor": ("editor-secret", ["kb*"], ["read", "write"]),
    "reader": ("reader-secret", ["kb*"], ["read"]),
    "neighbour": ("neighbour-secret", ["other-*"], ["read", "write"]),
}
EDITOR = (("authorization", f"Bearer {TOKENS['editor'][0]}"),)
NO_RETRIES = RetryPolicy(attempts=1)


@pytest.fixture
async def application(tmp_path: Path) -> AsyncIterator[Application]:
    settings = Settings(data_dir=tmp_path / "data")
    async with running(settings, in_memory_container(settings)) as app:
        yield app


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    folder = tmp_path / "kb"
    for name, text in FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    (folder / "frost.pdf").write_bytes(PDF)
    return folder


@pytest.fixture
async def port(application: Application, tmp_path: Path) -> AsyncIterator[int]:
    entries = [
        {"name": name, "sha256": token_digest(secret), "namespaces": patterns, "scopes": scopes}
        for name, (secret, patterns, scopes) in TOKENS.items()
    ]
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps(entries))
    server, port = await create_server(application, "127.0.0.1:0", GrpcSettings(tokens_file=tokens))
    yield port
    await server.stop(None)


@asynccontextmanager
async def client_of(port: int, name: str) -> AsyncIterator[RetrievalClient]:
    token = SecretStr(TOKENS[name][0])
    async with RetrievalClient.connect(
        f"127.0.0.1:{port}", token=token, retry=NO_RETRIES, timeout=10
    ) as client:
        yield client


@pytest.fixture
async def client(port: int) -> AsyncIterator[RetrievalClient]:
    async with client_of(port, "editor") as client:
        yield client


@pytest.fixture
async def stub(port: int) -> AsyncIterator[retrieval_pb2_grpc.RetrievalServiceStub]:
    """For what the client does not send."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        yield retrieval_pb2_grpc.RetrievalServiceStub(channel)


@pytest.fixture
async def synced(client: RetrievalClient, kb: Path) -> PathSync:
    done = await client.sync([kb], namespace=NS, domain=DOMAIN)
    assert not done.failures
    assert [o.outcome for o in done.report.outcomes] == [Outcome.CREATED] * 5
    return done


async def listed(client: RetrievalClient, namespace: str = NS) -> dict[str, str | None]:
    """Source by document id."""
    return {d.document_id: d.source for d in await client.documents(namespace=namespace)}


def id_of(sources: dict[str, str | None], path: Path) -> str:
    return next(document_id for document_id, source in sources.items() if source == str(path))


def calls(application: Application, method: str) -> float:
    """Calls of ``method`` the server has answered, whatever their status."""
    labels = {"service": SERVICE_NAME, "method": method}
    count = application.telemetry.metrics.registry.get_sample_value(
        "retrieval_rpc_duration_seconds_count", labels
    )
    return count or 0.0


def from_file(path: str, content: str, name: str = "", **fields: object) -> RagDocument:
    return RagDocument(
        document_id=f"readme{name}",
        title="Readme",
        domain=DOMAIN,
        content=content,
        source=Source(uri=path, root=path.rsplit("/", 1)[0], file_type="markdown", size=12),
        **fields,
    )


def test_a_document_crosses_the_wire_with_its_whole_source(kb: Path) -> None:
    loaded = read_documents([kb], domain=DOMAIN).documents
    assert all(d.source and d.source.modified_at and d.source.size for d in loaded)
    wire = [pb.Document.FromString(document_to_proto(d).SerializeToString()) for d in loaded]
    assert documents_from_proto(wire) == list(loaded)


async def test_matches_and_citations_carry_their_provenance(
    application: Application, client: RetrievalClient, kb: Path, synced: PathSync
) -> None:
    query = RetrievalQuery(query="prune tea bushes every four years", namespace=NS, top_k=10)
    remote = await client.retrieve_query(query)
    local = await application.retrieval.retrieve_query(query)
    assert remote.model_dump(exclude={"timings", "cached"}) == local.model_dump(
        exclude={"timings", "cached"}
    )
    timing = next(m for m in remote.matches if m.section == "Timing")
    assert (timing.source, timing.file_type) == (str(kb / "guide.md"), "markdown")

    frost = await client.retrieve("thatch bushes on frosty nights", namespace=NS, top_k=10)
    on_paper = next(m for m in frost.matches if m.file_type == "pdf")
    assert (on_paper.source, on_paper.pages) == (str(kb / "frost.pdf"), (1,))

    built = await client.build_context(query)
    assert built.context == (await application.answers.build_context(query)).context
    cited = next(c for c in built.context.citations if c.chunk_id == timing.chunk_id)
    assert (cited.source, cited.section, cited.pages) == (str(kb / "guide.md"), "Timing", ())
    assert f"{kb / 'guide.md'}, § Timing" in built.context.text


async def test_retrieve_filters_by_source_prefix_and_by_section(
    client: RetrievalClient,
    stub: retrieval_pb2_grpc.RetrievalServiceStub,
    kb: Path,
    synced: PathSync,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    question = "withered leaf rolled for hours; prune bushes"
    under_sub = await client.retrieve(
        question, namespace=NS, top_k=10, source_prefix=str(kb / "sub")
    )
    assert {m.source for m in under_sub.matches} == {
        str(kb / "sub" / "withering.md"),
        str(kb / "sub" / "rolling.md"),
    }
    timing = await client.retrieve(question, namespace=NS, top_k=10, section="Timing")
    assert timing.matches
    assert {(m.source, m.section) for m in timing.matches} == {(str(kb / "guide.md"), "Timing")}
    sibling = await client.retrieve(question, namespace=NS, source_prefix=str(kb) + "-old")
    assert not sibling.matches

    monkeypatch.chdir(kb.parent)
    relative = await client.retrieve(question, namespace=NS, top_k=10, source_prefix="kb/sub")
    assert relative.matches == under_sub.matches, "read from the working directory, as in process"
    request = pb.RetrieveRequest(query=question, namespace=NS, source_prefix="kb/sub")
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await stub.Retrieve(request, metadata=EDITOR)
    assert dict(refused.value.trailing_metadata())["x-error-field"] == "source_prefix"
    with pytest.raises(InvalidRequestError) as blank:
        await client.retrieve(question, namespace=NS, section="")
    assert blank.value.field == "section"


async def test_an_id_clash_fails_naming_both_sources_until_replaced(
    client: RetrievalClient,
) -> None:
    first = from_file("/repo/alpha/README.md", "Alpha reads the soil sensors.")
    second = from_file("/repo/beta/README.md", "Beta writes the weekly reports.")
    (created,) = await client.ingest_documents([first], namespace=NS)
    assert created.outcome == Outcome.CREATED

    (clash,) = await client.ingest_documents([second], namespace=NS)
    assert (clash.outcome, clash.source) == (Outcome.FAILED, "/repo/beta/README.md")
    assert clash.error is not None
    assert "/repo/alpha/README.md" in clash.error
    assert "/repo/beta/README.md" in clash.error
    assert await listed(client) == {"readme": "/repo/alpha/README.md"}

    (replaced,) = await client.ingest_documents([second], namespace=NS, replace=True)
    assert (replaced.outcome, replaced.source) == (Outcome.UPDATED, "/repo/beta/README.md")
    assert await listed(client) == {"readme": "/repo/beta/README.md"}


async def test_a_refused_document_is_a_failed_outcome_of_its_own_in_one_call(
    application: Application, client: RetrievalClient
) -> None:
    first, last = (from_file(f"/repo/{name}/README.md", "Reads the soil.", name) for name in "ac")
    bad = from_file("/repo/b/README.md", "Reserved keys.", "b", metadata={"position": "3"})

    with pytest.raises(InvalidRequestError) as whole:
        await client.ingest_documents([first, bad, last], namespace=NS)
    assert whole.value.field == "metadata"
    assert "'readmeb'" in str(whole.value)
    assert await listed(client) == {}

    before = calls(application, "IngestDocuments")
    outcomes = await client.ingest_documents(
        [first, bad, last], namespace=NS, refused_as_outcomes=True
    )
    assert calls(application, "IngestDocuments") == before + 1
    assert [(o.outcome, o.field) for o in outcomes] == [
        (Outcome.CREATED, None),
        (Outcome.FAILED, "metadata"),
        (Outcome.CREATED, None),
    ]
    assert outcomes[1].source == "/repo/b/README.md"
    assert outcomes[1].error is not None
    assert "reserved" in outcomes[1].error
    assert await listed(client) == {
        "readmea": "/repo/a/README.md",
        "readmec": "/repo/c/README.md",
    }


async def test_sync_of_paths_sets_a_refused_file_aside_in_one_call(
    application: Application, client: RetrievalClient, kb: Path, synced: PathSync
) -> None:
    before = await listed(client)
    guide = id_of(before, kb / "guide.md")
    (kb / "guide.md").write_text("---\nposition: 3\n---\n# Pruning guide\n\nReserved key.")
    (kb / "notes.txt").write_text("Shade trees\n\nSilver oak shade trees were felled.")

    sent = calls(application, "SyncDocuments")
    done = await client.sync([kb], namespace=NS, domain=DOMAIN)
    assert calls(application, "SyncDocuments") == sent + 1

    [failure] = done.failures
    assert (failure.source, failure.field) == (str(kb / "guide.md"), "metadata")
    outcomes = {o.document_id: o.outcome for o in done.report.outcomes}
    assert guide not in outcomes
    assert outcomes[id_of(before, kb / "notes.txt")] is Outcome.UPDATED
    assert done.report.count(Outcome.UNCHANGED) == 3
    assert await listed(client) == before


async def test_sync_deletes_a_gone_file_and_keeps_one_that_failed_to_read(
    client: RetrievalClient, kb: Path, synced: PathSync
) -> None:
    before = await listed(client)
    gone, unreadable = id_of(before, kb / "notes.txt"), id_of(before, kb / "guide.md")
    (kb / "notes.txt").unlink()
    (kb / "guide.md").write_bytes(b"# Pruning guide\n\n\xff\xfe not UTF-8")

    dry = await client.sync([kb], namespace=NS, domain=DOMAIN, dry_run=True)
    assert dry.report.dry_run
    assert await listed(client) == before

    done = await client.sync([kb], namespace=NS, domain=DOMAIN)
    assert [f.source for f in done.failures] == [str(kb / "guide.md")]
    outcomes = {o.document_id: (o.outcome, o.source) for o in done.report.outcomes}
    assert outcomes[gone] == (Outcome.DELETED, str(kb / "notes.txt"))
    assert unreadable not in outcomes
    assert done.report.count(Outcome.UNCHANGED) == 3
    assert [(o.document_id, o.outcome) for o in dry.report.outcomes] == [
        (o.document_id, o.outcome) for o in done.report.outcomes
    ]
    assert await listed(client) == {k: v for k, v in before.items() if k != gone}


async def test_sync_that_would_delete_most_of_the_namespace_is_a_failed_precondition(
    client: RetrievalClient,
    stub: retrieval_pb2_grpc.RetrievalServiceStub,
    kb: Path,
    synced: PathSync,
) -> None:
    before = await listed(client)
    for name in ("notes.txt", "guide.md", "frost.pdf"):
        (kb / name).unlink()
    with pytest.raises(MassDeleteError) as refused:
        await client.sync([kb], namespace=NS, domain=DOMAIN)
    assert "3 of the 5 documents" in str(refused.value)
    assert refused.value.field == "allow_mass_delete"
    assert await listed(client) == before

    with pytest.raises(grpc.aio.AioRpcError) as raw:
        await stub.SyncDocuments(
            pb.SyncDocumentsRequest(namespace=NS, roots=[str(kb)]), metadata=EDITOR
        )
    assert raw.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert "RETRIEVAL_SYNC_MAX_DELETE_SHARE" in (raw.value.details() or "")
    assert ("x-error-field", "allow_mass_delete") in tuple(raw.value.trailing_metadata())
    assert await listed(client) == before

    allowed = await client.sync([kb], namespace=NS, domain=DOMAIN, allow_mass_delete=True)
    assert allowed.report.count(Outcome.DELETED) == 3
    assert len(await listed(client)) == 2


async def test_sync_refuses_bad_input_naming_the_field(
    client: RetrievalClient, stub: retrieval_pb2_grpc.RetrievalServiceStub, kb: Path
) -> None:
    outside = from_file("/elsewhere/README.md", "Not under the root.")
    late = RagDocument(
        document_id="late",
        title="Late",
        domain=DOMAIN,
        content="Written in the year ten thousand.",
        source=Source(uri=str(kb / "late.md")),
    )
    cases = [
        ({"documents": [outside], "roots": [str(kb)]}, "documents.source"),
        ({"documents": [], "roots": []}, "roots"),
        ({"documents": [], "roots": ["kb"]}, "roots"),
        ({"documents": [], "roots": [str(kb)], "unreadable": ["notes.txt"]}, "unreadable"),
    ]
    for arguments, field in cases:
        with pytest.raises(InvalidRequestError) as refused:
            await client.sync_documents(SyncRequest(**arguments, namespace=NS))
        assert refused.value.field == field, arguments

    message = document_to_proto(late)
    message.source.modified_at.seconds = 253402300800
    with pytest.raises(grpc.aio.AioRpcError) as raw:
        await stub.SyncDocuments(
            pb.SyncDocumentsRequest(namespace=NS, documents=[message], roots=[str(kb)]),
            metadata=EDITOR,
        )
    assert raw.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    trailing = dict(raw.value.trailing_metadata())
    assert trailing["x-error-field"] == "documents[0].source.modified_at"
    assert await client.documents(namespace=NS) == []


async def test_sync_and_delete_carry_at_most_a_calls_documents(
    stub: retrieval_pb2_grpc.RetrievalServiceStub, kb: Path
) -> None:
    files = [from_file(str(kb / f"f{n}.md"), "A file.") for n in range(1001)]
    calls = [
        (
            stub.SyncDocuments,
            pb.SyncDocumentsRequest(
                namespace=NS, documents=[document_to_proto(f) for f in files], roots=[str(kb)]
            ),
            "documents",
        ),
        (
            stub.DeleteDocuments,
            pb.DeleteDocumentsRequest(namespace=NS, document_ids=[f"d{n}" for n in range(1001)]),
            "document_ids",
        ),
    ]
    for call, request, field in calls:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await call(request, metadata=EDITOR)
        assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert dict(refused.value.trailing_metadata())["x-error-field"] == field
        assert "RETRIEVAL_GRPC_MAX_DOCUMENTS_PER_CALL" in refused.value.details()


async def test_delete_documents_by_id_and_by_source_prefix(
    client: RetrievalClient, kb: Path, synced: PathSync
) -> None:
    before = await listed(client)
    guide = id_of(before, kb / "guide.md")
    dry = await client.delete([guide], namespace=NS, source_prefix=str(kb / "sub"), dry_run=True)
    assert dry.dry_run
    assert {d.source for d in dry.deleted} == {
        str(kb / "guide.md"),
        str(kb / "sub" / "withering.md"),
        str(kb / "sub" / "rolling.md"),
    }
    assert dry.chunks == 0
    assert await listed(client) == before

    by_id = await client.delete([guide, "no-such-document"], namespace=NS)
    assert [d.document_id for d in by_id.deleted] == [guide]
    assert by_id.deleted[0].title == "Pruning guide"
    assert by_id.missing == ("no-such-document",)
    assert by_id.chunks == by_id.deleted[0].chunks > 0

    by_prefix = await client.delete(namespace=NS, source_prefix=str(kb / "sub"))
    assert len(by_prefix.deleted) == 2
    assert set((await listed(client)).values()) == {str(kb / "notes.txt"), str(kb / "frost.pdf")}
    query = await client.retrieve("withered leaf rolled", namespace=NS, top_k=10)
    assert all(m.source is None or "/sub/" not in m.source for m in query.matches)

    with pytest.raises(InvalidRequestError) as nothing:
        await client.delete(namespace=NS)
    assert nothing.value.field == "document_ids"


async def test_list_documents_pages_through_the_namespace(
    application: Application,
    client: RetrievalClient,
    stub: retrieval_pb2_grpc.RetrievalServiceStub,
    kb: Path,
    synced: PathSync,
) -> None:
    every = await client.documents(namespace=NS)
    local = await application.library.documents(NS)
    assert every == sorted(local, key=lambda summary: summary.document_id)
    assert [d.document_id for d in every] == sorted(d.document_id for d in every)
    frost = next(d for d in every if d.file_type == "pdf")
    assert (frost.source, frost.chunks, frost.pending) == (str(kb / "frost.pdf"), 1, False)
    assert frost.updated_at is not None
    assert frost.updated_at <= datetime.now(UTC)
    under = await client.documents(namespace=NS, source_prefix=str(kb / "sub"))
    assert {d.source for d in under} == {str(kb / "sub/withering.md"), str(kb / "sub/rolling.md")}

    pages: list[list[str]] = []
    token = ""
    while not pages or token:
        response = await stub.ListDocuments(
            pb.ListDocumentsRequest(namespace=NS, page_size=2, page_token=token), metadata=EDITOR
        )
        pages.append([d.document_id for d in response.documents])
        token = response.next_page_token
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await stub.ListDocuments(
            pb.ListDocumentsRequest(namespace=NS, page_size=0), metadata=EDITOR
        )
    assert [len(page) for page in pages] == [2, 2, 1]
    assert [i for page in pages for i in page] == [d.document_id for d in every]
    assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert dict(refused.value.trailing_metadata())["x-error-field"] == "page_size"


async def test_sync_and_delete_need_the_write_scope(
    port: int, client: RetrievalClient, kb: Path, synced: PathSync
) -> None:
    before = await listed(client)
    async with client_of(port, "reader") as reader:
        assert await listed(reader) == before
        (kb / "notes.txt").unlink()
        with pytest.raises(PermissionDeniedError):
            await reader.sync([kb], namespace=NS, domain=DOMAIN)
        with pytest.raises(PermissionDeniedError):
            await reader.delete(list(before), namespace=NS)
        with pytest.raises(PermissionDeniedError):
            await reader.delete(list(before), namespace=NS, dry_run=True)
    assert await listed(client) == before


async def test_a_tenant_cannot_list_or_delete_another_tenants_namespace(
    port: int, client: RetrievalClient, kb: Path, synced: PathSync
) -> None:
    before = await listed(client)
    async with client_of(port, "neighbour") as neighbour:
        with pytest.raises(PermissionDeniedError):
            await neighbour.documents(namespace=NS)
        with pytest.raises(PermissionDeniedError):
            await neighbour.delete(namespace=NS, source_prefix=str(kb))
        with pytest.raises(PermissionDeniedError):
            await neighbour.sync([kb], namespace=NS, domain=DOMAIN, allow_mass_delete=True)
        assert await neighbour.documents(namespace="other-kb") == []
    assert await listed(client) == before


async def test_an_empty_or_blank_namespace_is_refused_never_the_default(
    client: RetrievalClient, kb: Path
) -> None:
    for namespace in ("", "  "):
        for write in (
            client.ingest(kb, namespace=namespace, domain=DOMAIN),
            client.sync(kb, namespace=namespace, domain=DOMAIN),
            client.ingest_documents([from_file(str(kb / "x.md"), "Text.")], namespace=namespace),
        ):
            with pytest.raises(InvalidRequestError) as refused:
                await write
            assert refused.value.field == "namespace"
