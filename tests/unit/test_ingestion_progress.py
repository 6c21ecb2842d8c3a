"""What ``IngestionService.ingest`` reports as it goes: chunks as they are embedded, not only
documents as their group is settled."""

from __future__ import annotations

from collections.abc import Sequence

from retrieval.domain.models import DEFAULT_DOMAINS, RagDocument
from retrieval.ports.embedder import Matrix
from retrieval.service.caching.caching_embedder import CachingEmbedder
from retrieval.service.ingestion.chunking import ChunkingPolicy
from retrieval.service.ingestion.consistency import ChunkStores
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.ingestion.outcomes import DocumentOutcome, Outcome
from retrieval.service.ingestion.progress import EMBEDDING_BATCH, IngestProgress
from retrieval_testkit import (
    HashEmbedder,
    InMemoryChunkRepository,
    InMemoryDocumentLedger,
    InMemoryEmbeddingCache,
    InMemoryKeywordIndex,
    InMemoryVectorIndex,
)
from retrieval_testkit.in_memory_namespace_generations import InMemoryNamespaceGenerations

NS = "progress"


def document(document_id: str, sections: int, edition: str = "") -> RagDocument:
    """About one chunk per section (sections of 50 words, chunks of at most 60)."""
    content = "\n\n".join(
        f"## Section {n}\n\n" + " ".join(f"{document_id}w{n}x{i}{edition}" for i in range(50))
        for n in range(sections)
    )
    return RagDocument(
        document_id=document_id, title="Pruning", domain="tea_cultivation", content=content
    )


class RecordingEmbedder(HashEmbedder):
    """Notes each call it is given in ``events``, which the progress writes to as well."""

    def __init__(self, events: list[tuple[str, int]]) -> None:
        super().__init__()
        self.events = events

    async def embed_passages(self, texts: Sequence[str]) -> Matrix:
        self.events.append(("embed call", len(texts)))
        return await super().embed_passages(texts)


def recorded(events: list[tuple[str, int]]) -> IngestProgress:
    def settled(outcomes: Sequence[DocumentOutcome]) -> None:
        events.append(("settled", len(outcomes)))

    return IngestProgress(
        to_embed=lambda chunks: events.append(("to embed", chunks)),
        embedded=lambda chunks: events.append(("embedded", chunks)),
        settled=settled,
    )


class Stack:
    def __init__(self) -> None:
        self.events: list[tuple[str, int]] = []
        self.model = RecordingEmbedder(self.events)
        self.ingestion = IngestionService(
            CachingEmbedder(self.model, InMemoryEmbeddingCache(), max_entries=100_000),
            ChunkStores(InMemoryVectorIndex(), InMemoryKeywordIndex(), InMemoryChunkRepository()),
            InMemoryDocumentLedger(),
            InMemoryNamespaceGenerations(),
            DEFAULT_DOMAINS,
            NS,
            ChunkingPolicy(max_words=60, overlap_words=10),
            documents_per_write=2,
        )

    async def ingest(self, *documents: RagDocument) -> list[DocumentOutcome]:
        self.events.clear()
        return await self.ingestion.ingest(documents, NS, recorded(self.events))


async def test_a_large_document_reports_each_batch_as_it_is_embedded() -> None:
    stack = Stack()
    big = document("big", sections=150)
    chunks = len(stack.ingestion.split(big, NS))
    assert chunks > 2 * EMBEDDING_BATCH

    [outcome] = await stack.ingest(big)

    assert outcome.outcome is Outcome.CREATED
    last = chunks - 2 * EMBEDDING_BATCH
    assert stack.events == [
        ("to embed", chunks),
        ("embed call", EMBEDDING_BATCH),
        ("embedded", EMBEDDING_BATCH),
        ("embed call", EMBEDDING_BATCH),
        ("embedded", EMBEDDING_BATCH),
        ("embed call", last),
        ("embedded", last),
        ("settled", 1),
    ]


async def test_chunks_to_embed_drop_by_those_of_documents_that_need_none() -> None:
    stack = Stack()
    await stack.ingest(document("kept", sections=5), document("edited", sections=7))
    edited = document("edited", sections=7, edition="b")
    new = document("new", sections=3)

    outcomes = await stack.ingest(document("kept", sections=5), edited, new)

    assert [o.outcome for o in outcomes] == [Outcome.UNCHANGED, Outcome.UPDATED, Outcome.CREATED]
    kept, edited_chunks, new_chunks = (o.chunks for o in outcomes)
    reports = [event for event in stack.events if event[0] != "embed call"]
    assert reports == [
        ("to embed", kept + edited_chunks + new_chunks),
        ("embedded", edited_chunks),
        ("to embed", edited_chunks + new_chunks),
        ("settled", 2),
        ("embedded", new_chunks),
        ("settled", 1),
    ]


async def test_passages_in_the_cache_are_not_embedded_again() -> None:
    stack = Stack()
    await stack.ingest(document("first", sections=80))
    embedded_once = len(stack.model.passages)
    renamed = document("first", sections=80).model_copy(update={"document_id": "moved"})

    [outcome] = await stack.ingest(renamed)

    assert outcome.outcome is Outcome.CREATED
    assert len(stack.model.passages) == embedded_once
    assert ("embed call", EMBEDDING_BATCH) not in stack.events
    assert sum(n for kind, n in stack.events if kind == "embedded") == outcome.chunks


async def test_a_plain_function_hears_of_each_group_settled() -> None:
    stack = Stack()
    seen: list[list[str]] = []
    documents = [document(f"doc-{n}", sections=2) for n in range(3)]

    await stack.ingestion.ingest(
        documents, NS, on_progress=lambda group: seen.append([o.document_id for o in group])
    )

    assert seen == [["doc-0", "doc-1"], ["doc-2"]]
