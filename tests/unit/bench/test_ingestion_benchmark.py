"""The ingestion benchmark measures what it says: the model runs once per distinct text."""

from __future__ import annotations

from retrieval.domain.models import DEFAULT_DOMAINS
from retrieval.service.caching.caching_embedder import CachingEmbedder
from retrieval.service.ingestion.chunking import ChunkingPolicy
from retrieval.service.ingestion.consistency import ChunkStores
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.ingestion.library_service import Library
from retrieval_bench.ingestion import measure_ingestion
from retrieval_testkit import (
    HashEmbedder,
    InMemoryChunkRepository,
    InMemoryDocumentLedger,
    InMemoryEmbeddingCache,
    InMemoryKeywordIndex,
    InMemoryVectorIndex,
)
from retrieval_testkit.in_memory_namespace_generations import InMemoryNamespaceGenerations


async def test_relabelled_and_renamed_documents_cost_no_model_time() -> None:
    model, raw = HashEmbedder(), HashEmbedder()
    index, keywords, chunks = (
        InMemoryVectorIndex(),
        InMemoryKeywordIndex(),
        InMemoryChunkRepository(),
    )
    ledger, generations = InMemoryDocumentLedger(), InMemoryNamespaceGenerations()
    ingestion = IngestionService(
        CachingEmbedder(model, InMemoryEmbeddingCache(), max_entries=10_000),
        ChunkStores(index, keywords, chunks),
        ledger,
        generations,
        DEFAULT_DOMAINS,
        "default",
        ChunkingPolicy(),
    )
    library = Library(ChunkStores(index, keywords, chunks), ledger, generations, "default", 30.0)
    figures = await measure_ingestion(ingestion, library, raw, copies=2, namespace="bench")
    documents = figures["documents"]
    assert figures["outcomes"] == {
        "first": {"created": documents, "updated": 0, "unchanged": 0, "deleted": 0, "failed": 0},
        "unchanged": {
            "created": 0,
            "updated": 0,
            "unchanged": documents,
            "deleted": 0,
            "failed": 0,
        },
        "relabelled": {
            "created": 0,
            "updated": documents,
            "unchanged": 0,
            "deleted": 0,
            "failed": 0,
        },
        "renamed": {"created": documents, "updated": 0, "unchanged": 0, "deleted": 0, "failed": 0},
    }
    assert len(model.passages) == len(raw.passages) == figures["chunks"]
    assert await chunks.count("bench") == 0
