"""The container's services on the in-memory stores and the hash embedder: no files, no
database, no model, no network."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from dependency_injector import providers

from retrieval.container import Application, Container, running
from retrieval.ports.keyword_index import KeywordIndex
from retrieval.ports.llm import Llm
from retrieval.ports.vector_index import VectorIndex
from retrieval.settings import Settings
from retrieval_testkit.hash_embedder import HashEmbedder
from retrieval_testkit.in_memory_chunk_repository import InMemoryChunkRepository
from retrieval_testkit.in_memory_document_ledger import InMemoryDocumentLedger
from retrieval_testkit.in_memory_embedding_cache import InMemoryEmbeddingCache
from retrieval_testkit.in_memory_keyword_index import InMemoryKeywordIndex
from retrieval_testkit.in_memory_namespace_generations import InMemoryNamespaceGenerations
from retrieval_testkit.in_memory_vector_index import InMemoryVectorIndex
from retrieval_testkit.scripted_llm import ScriptedLlm


@asynccontextmanager
async def in_memory_application(
    settings: Settings,
    *,
    llm: Llm | None = None,
    index: VectorIndex | None = None,
    keywords: KeywordIndex | None = None,
) -> AsyncIterator[Application]:
    """Every store in memory, ``HashEmbedder`` vectors, ``llm`` (a ``ScriptedLlm`` by default);
    ``index`` and ``keywords`` replace the in-memory doubles (say, with the embedded indexes
    made without a directory)."""
    container = Container(settings=settings)
    container.override_providers(
        model_embedder=providers.Object(HashEmbedder()),
        embedding_cache=providers.Object(InMemoryEmbeddingCache()),
        backend_index=providers.Object(index or InMemoryVectorIndex()),
        keyword_index=providers.Object(keywords or InMemoryKeywordIndex()),
        chunk_repository=providers.Object(InMemoryChunkRepository()),
        document_ledger=providers.Object(InMemoryDocumentLedger()),
        namespace_generations=providers.Object(InMemoryNamespaceGenerations()),
        mongo_uri=providers.Object(None),
        mongo_client=providers.Object(None),
        llm=providers.Object(llm or ScriptedLlm()),
    )
    async with running(settings, container) as app:
        yield app
