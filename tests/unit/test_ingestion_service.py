"""IngestionService over the in-memory doubles: what ends up stored."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from retrieval.domain.models import DEFAULT_DOMAINS, RagDocument
from retrieval.domain.vectors import VectorRecord
from retrieval.errors import BackendUnavailableError, InvalidRequestError
from retrieval.service.ingestion_service import (
    ChunkingPolicy,
    IngestionService,
    Outcome,
)
from retrieval_testkit import HashEmbedder, InMemoryChunkRepository, InMemoryVectorIndex

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


def service(index: InMemoryVectorIndex, chunks: InMemoryChunkRepository, embedder=None):
    return IngestionService(
        embedder or HashEmbedder(),
        index,
        chunks,
        DEFAULT_DOMAINS,
        NS,
        ChunkingPolicy(max_words=60, overlap_words=10),
        documents_per_write=2,
    )


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


async def test_every_chunk_has_a_text_and_a_vector(index, chunks) -> None:
    outcomes = await service(index, chunks).ingest([document()], NS)
    assert outcomes[0].outcome is Outcome.CREATED
    assert outcomes[0].chunks > 1
    stored = await chunks.chunk_ids("doc", NS)
    assert len(stored) == outcomes[0].chunks
    assert await vector_ids(index) == stored


async def test_vectors_carry_filterable_metadata(index, chunks) -> None:
    await service(index, chunks).ingest([document(metadata={"region": "assam"})], NS)
    found = await index.query([1.0] * 64, top_k=1, namespace=NS, filter={"region": "assam"})
    assert found[0].metadata["domain"] == "tea_cultivation"
    assert found[0].metadata["document_id"] == "doc"


async def test_passages_are_embedded_as_passages(index, chunks) -> None:
    embedder = HashEmbedder()
    await service(index, chunks, embedder).ingest([document()], NS)
    assert embedder.queries == []
    assert len(embedder.passages) == len(await chunks.chunk_ids("doc", NS))


async def test_reingesting_unchanged_document_writes_nothing(index, chunks) -> None:
    await service(index, chunks).ingest([document()], NS)
    embedder = HashEmbedder()
    outcomes = await service(index, chunks, embedder).ingest([document()], NS)
    assert outcomes[0].outcome is Outcome.UNCHANGED
    assert embedder.passages == []


async def test_changed_document_leaves_no_old_chunk_behind(index, chunks) -> None:
    await service(index, chunks).ingest([document()], NS)
    old = await chunks.chunk_ids("doc", NS)
    changed = document(LONG_BODY.replace("word2x5 ", "changed "))
    outcomes = await service(index, chunks).ingest([changed], NS)
    new = await chunks.chunk_ids("doc", NS)
    assert outcomes[0].outcome is Outcome.UPDATED
    assert new != old
    assert old & new, "chunks whose text did not change keep their ids"
    assert await vector_ids(index) == new


async def test_shorter_document_drops_its_tail(index, chunks) -> None:
    await service(index, chunks).ingest([document()], NS)
    await service(index, chunks).ingest([document("Only one short paragraph now.")], NS)
    assert len(await chunks.chunk_ids("doc", NS)) == 1
    assert len(await vector_ids(index)) == 1


async def test_chunk_ids_are_deterministic(index, chunks) -> None:
    first = service(index, chunks).split(document(), NS)
    second = service(InMemoryVectorIndex(), InMemoryChunkRepository()).split(document(), NS)
    assert [c.chunk_id for c in first] == [c.chunk_id for c in second]
    assert len({c.chunk_id for c in first}) == len(first)


async def test_failed_vector_write_keeps_the_previous_version_whole(chunks) -> None:
    index = UpsertsFail(healthy_upserts=1)
    await service(index, chunks).ingest([document()], NS)
    before = await chunks.chunk_ids("doc", NS)
    outcomes = await service(index, chunks).ingest([document("A new text.")], NS)
    assert outcomes[0].outcome is Outcome.FAILED
    assert "index down" in (outcomes[0].error or "")
    assert await chunks.chunk_ids("doc", NS) == before
    assert await vector_ids(index) == before


async def test_failed_first_ingest_leaves_nothing(chunks) -> None:
    outcomes = await service(UpsertsFail(), chunks).ingest([document()], NS)
    assert outcomes[0].outcome is Outcome.FAILED
    assert await chunks.count(NS) == 0


async def test_progress_is_reported_per_group(index, chunks) -> None:
    seen: list[int] = []
    docs = [document(document_id=f"doc-{n}") for n in range(5)]
    await service(index, chunks).ingest(docs, NS, on_progress=seen.append)
    assert seen == [2, 2, 1]


@pytest.mark.parametrize(
    ("documents", "field"),
    [
        ([document(document_id="a"), document(document_id="a")], "document_id"),
        ([document(metadata={"domain": "x"})], "metadata"),
    ],
)
async def test_bad_documents_are_rejected_before_any_write(index, chunks, documents, field) -> None:
    with pytest.raises(InvalidRequestError) as raised:
        await service(index, chunks).ingest(documents, NS)
    assert raised.value.field == field
    assert await chunks.count() == 0


async def test_unknown_domain_is_rejected(index, chunks) -> None:
    odd = RagDocument(document_id="d", title="t", domain="coffee", content="beans")
    with pytest.raises(InvalidRequestError):
        await service(index, chunks).ingest([odd], NS)


async def test_delete_document_removes_vectors_and_texts(index, chunks) -> None:
    ingestion = service(index, chunks)
    await ingestion.ingest([document(), document(document_id="other")], NS)
    removed = await ingestion.delete_document("doc", NS)
    assert removed > 0
    assert await chunks.chunk_ids("doc", NS) == set()
    assert await vector_ids(index) == await chunks.chunk_ids("other", NS)


async def test_delete_namespace_removes_everything(index, chunks) -> None:
    ingestion = service(index, chunks)
    await ingestion.ingest([document()], NS)
    await ingestion.delete_namespace(NS)
    assert await chunks.count(NS) == 0
    assert NS not in (await index.stats()).namespaces


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda s: s.ingest([document()], "../etc"), "namespace"),
        (lambda s: s.delete_document("a b", NS), "document_id"),
        (lambda s: s.delete_document("doc", "a b"), "namespace"),
        (lambda s: s.delete_namespace(""), "namespace"),
    ],
)
async def test_bad_identifiers_are_typed_errors(index, chunks, call, field) -> None:
    with pytest.raises(InvalidRequestError) as raised:
        await call(service(index, chunks))
    assert raised.value.field == field
