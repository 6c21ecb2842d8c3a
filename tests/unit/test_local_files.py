"""The local-files use case in process: each document cut once, a refused one a failure of
its own, the rest written."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from retrieval.adapters.files.document_files import LoadedDocuments
from retrieval.adapters.files.sync_scope import sync_scope
from retrieval.domain.models import DEFAULT_DOMAINS, RagChunk, RagDocument
from retrieval.service.ingestion.chunking import ChunkingPolicy
from retrieval.service.ingestion.consistency import ChunkStores
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.ingestion.library_service import Library
from retrieval.service.ingestion.local_files import LocalFiles, ServiceIntake
from retrieval.service.ingestion.outcomes import Outcome
from retrieval.service.ingestion.sync import LibrarySync
from retrieval_testkit import (
    HashEmbedder,
    InMemoryChunkRepository,
    InMemoryDocumentLedger,
    InMemoryKeywordIndex,
    InMemoryVectorIndex,
)
from retrieval_testkit.in_memory_namespace_generations import InMemoryNamespaceGenerations

NS = "kb"


@dataclass(frozen=True)
class CountingPolicy(ChunkingPolicy):
    """Cuts as the default policy does, noting each document it cuts."""

    cut: list[str] = field(default_factory=list)

    def split(self, document: RagDocument, namespace: str, model: str) -> list[RagChunk]:
        self.cut.append(document.document_id)
        return super().split(document, namespace, model)


def local_files(policy: ChunkingPolicy) -> LocalFiles:
    index, keywords, chunks = (
        InMemoryVectorIndex(),
        InMemoryKeywordIndex(),
        InMemoryChunkRepository(),
    )
    ledger, generations = InMemoryDocumentLedger(), InMemoryNamespaceGenerations()
    stores = ChunkStores(index, keywords, chunks)
    writer = IngestionService(
        HashEmbedder(), stores, ledger, generations, DEFAULT_DOMAINS, NS, policy
    )
    library = Library(stores, ledger, generations, NS, 30.0)
    sync = LibrarySync(writer, library, ledger, max_delete_share=0.5)
    return LocalFiles(ServiceIntake(writer, sync), sync_scope)


def document(document_id: str, folder: Path = Path("/kb"), **fields: object) -> RagDocument:
    return RagDocument.model_validate(
        {
            "document_id": document_id,
            "title": document_id,
            "domain": "tea_cultivation",
            "content": "Tea leaves wilt in drought. " * 40,
            "source": {"uri": str(folder / f"{document_id}.md"), "file_type": "markdown"},
            **fields,
        }
    )


def read(*documents: RagDocument) -> LoadedDocuments:
    return LoadedDocuments(documents=documents, failures=(), skipped=(), files=len(documents))


async def test_each_document_is_cut_once_for_its_check_and_its_write() -> None:
    policy = CountingPolicy()

    report = await local_files(policy).ingest(read(document("a"), document("b")), NS)

    assert [o.outcome for o in report.outcomes] == [Outcome.CREATED, Outcome.CREATED]
    assert policy.cut == ["a", "b"]


async def test_a_sync_cuts_each_document_once_too(tmp_path: Path) -> None:
    policy = CountingPolicy()
    files = read(document("a", tmp_path))

    synced = await local_files(policy).sync([tmp_path], files, NS, dry_run=True)

    assert [o.outcome for o in synced.report.outcomes] == [Outcome.CREATED]
    assert policy.cut == ["a"]


async def test_a_refused_document_fails_alone_with_its_reason_and_field() -> None:
    refused = document("b", metadata={"position": "3"})

    report = await local_files(ChunkingPolicy()).ingest(read(document("a"), refused), NS)

    assert [o.document_id for o in report.outcomes] == ["a"]
    [failure] = report.failures
    assert (failure.source, failure.field) == ("/kb/b.md", "metadata")
    assert "reserved" in failure.reason
