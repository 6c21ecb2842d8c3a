"""StatsService over the in-memory stores: sizes, orphans, footprints and the status."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import pytest

from retrieval.domain.collection_health import Footprint, HealthStatus, Orphans
from retrieval.domain.keywords import KeywordRecord
from retrieval.domain.models import DEFAULT_DOMAINS, RagDocument
from retrieval.domain.vectors import IndexStats
from retrieval.errors import BackendUnavailableError
from retrieval.service.ingestion.chunking import ChunkingPolicy
from retrieval.service.ingestion.consistency import ChunkStores
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.stats import StatsService
from retrieval_testkit import (
    HashEmbedder,
    InMemoryChunkRepository,
    InMemoryDocumentLedger,
    InMemoryKeywordIndex,
    InMemoryVectorIndex,
)
from retrieval_testkit.in_memory_namespace_generations import InMemoryNamespaceGenerations

NS = "health"
PROBE_TIMEOUT_S = 0.2
DISK = Footprint(store="vector index (exact)", disk_bytes=4096, memory_bytes=512)
NO_ORPHANS = Orphans(
    texts_without_vectors=0,
    vectors_without_texts=0,
    texts_without_keywords=0,
    keywords_without_texts=0,
    stale_chunks=0,
    pending_documents=0,
)


def document(document_id: str) -> RagDocument:
    content = "\n\n".join(
        f"## Part {n}\n\n" + " ".join(f"{document_id}w{n}x{i}" for i in range(50)) for n in range(3)
    )
    return RagDocument(
        document_id=document_id, title="Pruning", domain="tea_cultivation", content=content
    )


class Crash(BaseException):
    """The process died mid-write: no rollback runs."""


class CrashingKeywordIndex(InMemoryKeywordIndex):
    """Dies at its first write, so the rollback is cut short as well."""

    async def upsert(self, records: Sequence[KeywordRecord], namespace: str) -> int:
        raise Crash

    async def delete(
        self, *, namespace: str, ids: Sequence[str] | None = None, delete_all: bool = False
    ) -> None:
        raise Crash


class UnreachableChunks(InMemoryChunkRepository):
    async def count(self, namespace: str | None = None) -> int:
        raise BackendUnavailableError("MongoDB unreachable during count")


class SilentIndex(InMemoryVectorIndex):
    async def stats(self) -> IndexStats:
        await asyncio.sleep(30)
        raise AssertionError("the probe should have given up")


class UnlistableKeywords(InMemoryKeywordIndex):
    async def list_ids(
        self, namespace: str, *, prefix: str | None = None
    ) -> AsyncIterator[list[str]]:
        raise BackendUnavailableError("keyword index unreachable")
        yield []


class FixedFootprint:
    async def footprint(self) -> Footprint:
        return DISK


class Stack:
    """The stores of the collection, ingestion writing to them and stats reading them."""

    def __init__(
        self,
        index: InMemoryVectorIndex | None = None,
        keywords: InMemoryKeywordIndex | None = None,
        chunks: InMemoryChunkRepository | None = None,
    ) -> None:
        self.index = index or InMemoryVectorIndex()
        self.keywords = keywords or InMemoryKeywordIndex()
        self.chunks = chunks or InMemoryChunkRepository()
        self.ledger = InMemoryDocumentLedger()
        self.stats = StatsService(
            self.index,
            self.keywords,
            self.chunks,
            self.ledger,
            HashEmbedder(),
            [FixedFootprint()],
            probe_timeout_s=PROBE_TIMEOUT_S,
        )

    def ingestion(self, keywords: InMemoryKeywordIndex | None = None) -> IngestionService:
        return IngestionService(
            HashEmbedder(),
            ChunkStores(self.index, keywords or self.keywords, self.chunks),
            self.ledger,
            InMemoryNamespaceGenerations(),
            DEFAULT_DOMAINS,
            NS,
            ChunkingPolicy(max_words=60, overlap_words=10),
        )

    async def ingest(self, *document_ids: str) -> None:
        await self.ingestion().ingest([document(name) for name in document_ids], NS)


async def vector_ids(index: InMemoryVectorIndex) -> list[str]:
    return [chunk async for page in index.list_ids(NS) for chunk in page]


async def test_a_consistent_namespace_is_green() -> None:
    stack = Stack()
    await stack.ingest("a", "b")
    report = await stack.stats.collect()
    assert report.status is HealthStatus.GREEN
    assert report.reasons == ()
    assert report.embedding_model == HashEmbedder().model
    assert report.dimension == HashEmbedder().dimension
    [namespace] = report.namespaces
    assert namespace.namespace == NS
    assert namespace.status is HealthStatus.GREEN
    assert namespace.orphans == NO_ORPHANS
    assert namespace.vector_count == namespace.chunk_count == await stack.chunks.count(NS) > 3
    assert report.total_vector_count == report.total_chunk_count == namespace.chunk_count
    assert report.footprints == (DISK,)


async def test_vectors_removed_after_ingestion_make_it_yellow() -> None:
    stack = Stack()
    await stack.ingest("a", "b")
    lost = (await vector_ids(stack.index))[:2]
    await stack.index.delete(namespace=NS, ids=lost)
    report = await stack.stats.collect()
    [namespace] = report.namespaces
    assert namespace.status is report.status is HealthStatus.YELLOW
    assert namespace.orphans == NO_ORPHANS.model_copy(update={"texts_without_vectors": 2})
    assert namespace.chunk_count == namespace.vector_count + 2
    assert namespace.reasons == report.reasons == (f"namespace {NS}: 2 texts without vectors",)


async def test_a_write_cut_short_shows_its_pending_document_and_orphans() -> None:
    stack = Stack()
    await stack.ingest("b")
    whole = await stack.chunks.count(NS)
    with pytest.raises(Crash):
        await stack.ingestion(CrashingKeywordIndex()).ingest([document("a")], NS)
    left = await stack.chunks.count(NS) - whole
    report = await stack.stats.collect()
    [namespace] = report.namespaces
    assert report.status is HealthStatus.YELLOW
    assert left > 0
    assert namespace.orphans == NO_ORPHANS.model_copy(
        update={
            "texts_without_vectors": left,
            "texts_without_keywords": left,
            "pending_documents": 1,
        }
    )
    assert report.reasons == (
        f"namespace {NS}: {left} texts without vectors",
        f"namespace {NS}: {left} texts without keyword entries",
        f"namespace {NS}: 1 pending documents",
    )


async def test_texts_of_a_namespace_that_lost_every_vector_and_record_make_it_yellow() -> None:
    stack = Stack()
    await stack.ingest("a")
    texts = await stack.chunks.count(NS)
    await stack.index.delete(namespace=NS, delete_all=True)
    await stack.ledger.delete_namespace(NS)
    report = await stack.stats.collect()
    assert report.namespaces == ()
    assert report.status is HealthStatus.YELLOW
    assert report.reasons == (f"{texts} chunk texts in namespaces that hold no vectors",)


async def test_a_store_raising_a_backend_error_makes_it_red() -> None:
    stack = Stack(chunks=UnreachableChunks())
    report = await stack.stats.collect()
    assert report.status is HealthStatus.RED
    assert report.reasons == ("stores: store unreachable: MongoDB unreachable during count",)
    assert report.total_vector_count is report.total_chunk_count is None
    assert report.namespaces == ()
    assert report.footprints == (DISK,)
    assert (await stack.stats.reachability()).status is HealthStatus.RED


async def test_a_store_that_does_not_answer_in_time_makes_it_red() -> None:
    stack = Stack(index=SilentIndex())
    started = asyncio.get_running_loop().time()
    report = await stack.stats.collect()
    assert asyncio.get_running_loop().time() - started < 5
    assert report.status is HealthStatus.RED
    assert report.reasons == (f"stores: store unreachable: no answer within {PROBE_TIMEOUT_S} s",)


async def test_a_listing_that_fails_makes_its_namespace_red() -> None:
    stack = Stack(keywords=UnlistableKeywords())
    await stack.ingest("a")
    report = await stack.stats.collect()
    [namespace] = report.namespaces
    assert namespace.status is report.status is HealthStatus.RED
    assert namespace.chunk_count is namespace.orphans is None
    assert namespace.vector_count > 0
    assert report.reasons == (f"namespace {NS}: store unreachable: keyword index unreachable",)


async def test_reachability_is_green_when_both_stores_answer() -> None:
    stack = Stack()
    await stack.ingest("a")
    await stack.index.delete(namespace=NS, delete_all=True)
    verdict = await stack.stats.reachability()
    assert verdict.status is HealthStatus.GREEN
    assert verdict.reasons == ()


async def test_a_view_of_some_namespaces_audits_counts_and_grades_only_those() -> None:
    stack = Stack()
    await stack.ingest("a")
    await stack.ingestion().ingest([document("b")], "other")
    other = [chunk async for page in stack.index.list_ids("other") for chunk in page]
    await stack.index.delete(namespace="other", ids=other[:1])
    report = await stack.stats.collect(lambda name: name == NS)
    [namespace] = report.namespaces
    assert namespace.namespace == NS
    assert report.status is HealthStatus.GREEN
    assert report.total_vector_count == namespace.vector_count
    assert report.total_chunk_count == namespace.chunk_count
    assert report.footprints == ()
    whole = await stack.stats.collect()
    assert whole.status is HealthStatus.YELLOW
    assert whole.total_vector_count == namespace.vector_count + len(other) - 1


async def test_a_view_of_some_namespaces_whose_audit_fails_has_no_chunk_total() -> None:
    stack = Stack(keywords=UnlistableKeywords())
    await stack.ingest("a")
    report = await stack.stats.collect(lambda name: True)
    [namespace] = report.namespaces
    assert report.total_chunk_count is None
    assert report.total_vector_count == namespace.vector_count > 0
