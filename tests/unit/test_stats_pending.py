"""``retrieval stats`` after a write cut short: a namespace with a pending document is yellow,
even when the write stopped before storing anything (so no store but the ledger knows of it)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from retrieval.domain.collection_health import HealthStatus
from retrieval.domain.ledger import DocumentRecord, Lease
from retrieval.domain.models import DEFAULT_DOMAINS, RagDocument
from retrieval.errors import BackendUnavailableError
from retrieval.ports.embedder import Embedder, Matrix
from retrieval.service.ingestion.chunking import ChunkingPolicy
from retrieval.service.ingestion.consistency import ChunkStores
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.ingestion.leases import writer_lease
from retrieval.service.ingestion.outcomes import Outcome
from retrieval.service.ingestion.reconciliation import Reconciliation
from retrieval.service.ingestion.repair import Repair
from retrieval.service.stats import StatsService
from retrieval_testkit import (
    HashEmbedder,
    InMemoryChunkRepository,
    InMemoryDocumentLedger,
    InMemoryKeywordIndex,
    InMemoryVectorIndex,
)
from retrieval_testkit.in_memory_namespace_generations import InMemoryNamespaceGenerations

NS = "cut-short"


class Killed(BaseException):
    """The process died while embedding, or its MongoDB did (Ctrl-C reaches the embedded
    server too): the rollback never reaches the ledger."""


class DeadAfterEmbedding(InMemoryDocumentLedger):
    killed = False

    async def save(self, records: Sequence[DocumentRecord], lease: Lease) -> None:
        if self.killed:
            raise Killed
        await super().save(records, lease)


class KillsWhileEmbedding(HashEmbedder):
    def __init__(self, ledger: DeadAfterEmbedding) -> None:
        super().__init__()
        self._ledger = ledger

    async def embed_passages(self, texts: Sequence[str]) -> Matrix:
        self._ledger.killed = True
        raise Killed


class Stack:
    def __init__(self) -> None:
        self.index = InMemoryVectorIndex()
        self.keywords = InMemoryKeywordIndex()
        self.chunks = InMemoryChunkRepository()
        self.ledger = DeadAfterEmbedding()
        self.stats = StatsService(
            self.index, self.keywords, self.chunks, self.ledger, HashEmbedder(), [], 1.0
        )

    def ingestion(self, embedder: Embedder, namespace: str = NS) -> IngestionService:
        return IngestionService(
            embedder,
            ChunkStores(self.index, self.keywords, self.chunks),
            self.ledger,
            InMemoryNamespaceGenerations(),
            DEFAULT_DOMAINS,
            namespace,
            ChunkingPolicy(),
        )

    def repair(self) -> Repair:
        stores = ChunkStores(self.index, self.keywords, self.chunks)
        reconciliation = Reconciliation(HashEmbedder(), stores, self.ledger, 0.0)
        return Repair(reconciliation, InMemoryNamespaceGenerations())

    async def ingest_dying_while_embedding(self, namespace: str) -> None:
        ingestion = self.ingestion(KillsWhileEmbedding(self.ledger), namespace)
        with pytest.raises(Killed):
            await ingestion.ingest([document("big")], namespace)


def document(document_id: str) -> RagDocument:
    return RagDocument(
        document_id=document_id, title="Big", domain="tea_cultivation", content="Frost. " * 50
    )


async def test_a_namespace_whose_first_write_was_cut_short_is_yellow() -> None:
    stack = Stack()
    await stack.ingest_dying_while_embedding(NS)

    report = await stack.stats.collect()

    assert report.status is HealthStatus.YELLOW
    assert report.reasons == (f"namespace {NS}: 1 pending documents",)
    [namespace] = report.namespaces
    assert (namespace.namespace, namespace.vector_count, namespace.chunk_count) == (NS, 0, 0)
    assert namespace.orphans is not None
    assert namespace.orphans.pending_documents == 1


async def test_the_next_start_rolls_back_a_write_whose_process_is_gone() -> None:
    stack = Stack()
    await stack.ingest_dying_while_embedding(NS)
    stack.ledger.killed = False
    restarted = stack.ingestion(HashEmbedder())

    assert await stack.repair().recover() == 1

    report = await stack.stats.collect()
    assert (report.status, report.namespaces) == (HealthStatus.GREEN, ())
    [written] = await restarted.ingest([document("big")])
    assert written.outcome is Outcome.CREATED


async def test_a_write_still_running_is_not_recovered() -> None:
    stack = Stack()
    with writer_lease() as lease:
        await stack.ledger.claim(NS, ["big"], lease)

        assert await stack.repair().recover() == 0

        assert [held for _, held in await stack.ledger.unsettled(lease.host)] == [lease]


async def test_a_caller_limited_to_other_namespaces_is_not_told_of_it() -> None:
    stack = Stack()
    await stack.ingest_dying_while_embedding(NS)

    report = await stack.stats.collect(visible=lambda name: name != NS)

    assert report.status is HealthStatus.GREEN
    assert report.namespaces == ()


class UnlistableLedger(InMemoryDocumentLedger):
    async def namespaces(self) -> list[str]:
        raise BackendUnavailableError("MongoDB unreachable")


async def test_a_ledger_that_cannot_list_its_namespaces_makes_it_red() -> None:
    stats = StatsService(
        InMemoryVectorIndex(),
        InMemoryKeywordIndex(),
        InMemoryChunkRepository(),
        UnlistableLedger(),
        HashEmbedder(),
        [],
        1.0,
    )

    report = await stats.collect()

    assert report.status is HealthStatus.RED
    assert report.reasons == ("stores: store unreachable: MongoDB unreachable",)
