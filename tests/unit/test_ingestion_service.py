"""IngestionService over the in-memory doubles: what ends up stored."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from retrieval.domain.models import DEFAULT_DOMAINS, RagDocument
from retrieval.domain.vectors import VectorRecord
from retrieval.errors import BackendUnavailableError, InvalidRequestError
from retrieval.service.ingestion.chunking import ChunkingPolicy
from retrieval.service.ingestion.consistency import ChunkStores
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.ingestion.library_service import Library
from retrieval.service.ingestion.outcomes import Outcome
from retrieval_testkit import (
    HashEmbedder,
    InMemoryChunkRepository,
    InMemoryDocumentLedger,
    InMemoryKeywordIndex,
    InMemoryVectorIndex,
)
from retrieval_testkit.in_memory_namespace_generations import InMemoryNamespaceGenerations

NS = "unit"
LONG_BODY = "\n\n".join(
    f"## Section {n}\n\n" + " ".join(f"word{n}x{i}" for i in range(70)) for n in range(4)
)


def document(content: str = LONG_BODY, document_id: str = "doc", **extra) -> RagDocument:
    return RagDocument(
        document_id=document_id,
        title="Tea pruning",
        domain="tea_cultivation",
        content=content,
        **extra,
    )


class UpsertsFail(InMemoryVectorIndex):
    """An index whose writes fail after ``healthy_upserts`` successful ones."""

    def __init__(self, healthy_upserts: int = 0) -> None:
        super().__init__()
        self.healthy_upserts = healthy_upserts

    async def upsert(self, records: Sequence[VectorRecord], namespace: str) -> int:
        if self.healthy_upserts == 0:
            raise BackendUnavailableError("index down")
        self.healthy_upserts -= 1
        return await super().upsert(records, namespace)


def service(index, chunks, ledger, embedder=None, keywords=None) -> IngestionService:
    """Every service a test builds shares the test's stores and ledger, as replicas do."""
    return IngestionService(
        embedder or HashEmbedder(),
        ChunkStores(index, keywords or InMemoryKeywordIndex(), chunks),
        ledger,
        InMemoryNamespaceGenerations(),
        DEFAULT_DOMAINS,
        NS,
        ChunkingPolicy(max_words=60, overlap_words=10),
        documents_per_write=2,
    )


def library(index, chunks, ledger, keywords) -> Library:
    """The library over the same stores as ``service``'s writer."""
    stores = ChunkStores(index, keywords, chunks)
    return Library(stores, ledger, InMemoryNamespaceGenerations(), NS, lease_wait_s=30.0)


@pytest.fixture
def ledger() -> InMemoryDocumentLedger:
    return InMemoryDocumentLedger()


@pytest.fixture
def index() -> InMemoryVectorIndex:
    return InMemoryVectorIndex()


@pytest.fixture
def chunks() -> InMemoryChunkRepository:
    return InMemoryChunkRepository()


async def vector_ids(index: InMemoryVectorIndex) -> set[str]:
    stats = await index.stats()
    if NS not in stats.namespaces:
        return set()
    found = await index.query([1.0] * 64, top_k=1000, namespace=NS)
    negative = await index.query([-1.0] * 64, top_k=1000, namespace=NS)
    return {m.id for m in found} | {m.id for m in negative}


async def test_every_chunk_has_a_text_and_a_vector(index, chunks, ledger) -> None:
    outcomes = await service(index, chunks, ledger).ingest([document()], NS)
    assert outcomes[0].outcome is Outcome.CREATED
    assert outcomes[0].chunks > 1
    stored = await chunks.chunk_ids("doc", NS)
    assert len(stored) == outcomes[0].chunks
    assert await vector_ids(index) == stored


async def test_vectors_carry_filterable_metadata(index, chunks, ledger) -> None:
    await service(index, chunks, ledger).ingest([document(metadata={"region": "assam"})], NS)
    found = await index.query([1.0] * 64, top_k=1, namespace=NS, filter={"region": "assam"})
    assert found[0].metadata["domain"] == "tea_cultivation"
    assert found[0].metadata["document_id"] == "doc"


async def test_passages_are_embedded_as_passages(index, chunks, ledger) -> None:
    embedder = HashEmbedder()
    await service(index, chunks, ledger, embedder).ingest([document()], NS)
    assert embedder.queries == []
    assert len(embedder.passages) == len(await chunks.chunk_ids("doc", NS))


async def test_reingesting_unchanged_document_writes_nothing(index, chunks, ledger) -> None:
    await service(index, chunks, ledger).ingest([document()], NS)
    embedder = HashEmbedder()
    outcomes = await service(index, chunks, ledger, embedder).ingest([document()], NS)
    assert outcomes[0].outcome is Outcome.UNCHANGED
    assert embedder.passages == []


async def test_changed_document_leaves_no_old_chunk_behind(index, chunks, ledger) -> None:
    await service(index, chunks, ledger).ingest([document()], NS)
    old = await chunks.chunk_ids("doc", NS)
    changed = document(LONG_BODY.replace("word2x5 ", "changed "))
    outcomes = await service(index, chunks, ledger).ingest([changed], NS)
    new = await chunks.chunk_ids("doc", NS)
    assert outcomes[0].outcome is Outcome.UPDATED
    assert new != old
    assert old & new, "chunks whose text did not change keep their ids"
    assert await vector_ids(index) == new


async def test_shorter_document_drops_its_tail(index, chunks, ledger) -> None:
    await service(index, chunks, ledger).ingest([document()], NS)
    await service(index, chunks, ledger).ingest([document("Only one short paragraph now.")], NS)
    assert len(await chunks.chunk_ids("doc", NS)) == 1
    assert len(await vector_ids(index)) == 1


async def test_chunk_ids_are_deterministic(index, chunks, ledger) -> None:
    first = service(index, chunks, ledger).split(document(), NS)
    second = service(InMemoryVectorIndex(), InMemoryChunkRepository(), ledger).split(document(), NS)
    assert [c.chunk_id for c in first] == [c.chunk_id for c in second]
    assert len({c.chunk_id for c in first}) == len(first)


async def test_failed_vector_write_keeps_the_previous_version_whole(chunks, ledger) -> None:
    index = UpsertsFail(healthy_upserts=1)
    await service(index, chunks, ledger).ingest([document()], NS)
    before = await chunks.chunk_ids("doc", NS)
    outcomes = await service(index, chunks, ledger).ingest([document("A new text.")], NS)
    assert outcomes[0].outcome is Outcome.FAILED
    assert "index down" in (outcomes[0].error or "")
    assert await chunks.chunk_ids("doc", NS) == before
    assert await vector_ids(index) == before


async def test_failed_first_ingest_leaves_nothing(chunks, ledger) -> None:
    outcomes = await service(UpsertsFail(), chunks, ledger).ingest([document()], NS)
    assert outcomes[0].outcome is Outcome.FAILED
    assert await chunks.count(NS) == 0


async def test_progress_is_reported_per_group(index, chunks, ledger) -> None:
    seen: list[list[str]] = []
    docs = [document(document_id=f"doc-{n}") for n in range(5)]
    await service(index, chunks, ledger).ingest(
        docs, NS, on_progress=lambda group: seen.append([o.document_id for o in group])
    )
    assert seen == [["doc-0", "doc-1"], ["doc-2", "doc-3"], ["doc-4"]]


@pytest.mark.parametrize(
    ("documents", "field"),
    [
        ([document(document_id="a"), document(document_id="a")], "document_id"),
        ([document(metadata={"domain": "x"})], "metadata"),
        ([document(document_id="ok"), document(metadata={"embedding_model": "x"})], "metadata"),
        ([document(metadata={"notes": "x" * 1_000_000})], "metadata"),
        ([document("Some text\x00 and more after the NUL")], "content"),
        ([document("   \n\t ")], "content"),
        ([document("# Only a heading")], "content"),
        ([RagDocument(document_id="d", title="t", domain="coffee", content="beans")], "domain"),
    ],
)
async def test_bad_documents_are_rejected_before_any_write(
    index, chunks, documents, field, ledger
) -> None:
    embedder = HashEmbedder()
    with pytest.raises(InvalidRequestError) as raised:
        await service(index, chunks, ledger, embedder).ingest(documents, NS)
    assert raised.value.field == field
    assert repr(documents[-1].document_id) in str(raised.value)
    assert embedder.passages == []
    assert await chunks.count() == 0


async def test_delete_document_removes_vectors_and_texts(index, chunks, ledger) -> None:
    keywords = InMemoryKeywordIndex()
    await service(index, chunks, ledger, keywords=keywords).ingest(
        [document(), document(document_id="other")], NS
    )
    removed = await library(index, chunks, ledger, keywords).delete_document("doc", NS)
    assert removed > 0
    assert await chunks.chunk_ids("doc", NS) == set()
    assert await vector_ids(index) == await chunks.chunk_ids("other", NS)


async def test_delete_namespace_removes_everything(index, chunks, ledger) -> None:
    keywords = InMemoryKeywordIndex()
    await service(index, chunks, ledger, keywords=keywords).ingest([document()], NS)
    await library(index, chunks, ledger, keywords).delete_namespace(NS)
    assert await chunks.count(NS) == 0
    assert NS not in (await index.stats()).namespaces


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda writer, _: writer.ingest([document()], "../etc"), "namespace"),
        (lambda _, kept: kept.delete_document("a b", NS), "document_id"),
        (lambda _, kept: kept.delete_document("doc", "a b"), "namespace"),
        (lambda _, kept: kept.delete_namespace(""), "namespace"),
    ],
)
async def test_bad_identifiers_are_typed_errors(index, chunks, call, field, ledger) -> None:
    keywords = InMemoryKeywordIndex()
    with pytest.raises(InvalidRequestError) as raised:
        await call(
            service(index, chunks, ledger, keywords=keywords),
            library(index, chunks, ledger, keywords),
        )
    assert raised.value.field == field
