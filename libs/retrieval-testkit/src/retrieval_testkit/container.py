"""The real container with MongoDB, or the model and every store, replaced by in-memory doubles."""

from __future__ import annotations

from dependency_injector import providers

from retrieval.container import Container
from retrieval.settings import Settings
from retrieval_testkit.hash_embedder import HashEmbedder
from retrieval_testkit.in_memory_chunk_repository import InMemoryChunkRepository
from retrieval_testkit.in_memory_document_ledger import InMemoryDocumentLedger
from retrieval_testkit.in_memory_embedding_cache import InMemoryEmbeddingCache
from retrieval_testkit.in_memory_extraction_cache import InMemoryExtractionCache
from retrieval_testkit.in_memory_graph_store import InMemoryGraphStore
from retrieval_testkit.in_memory_namespace_generations import InMemoryNamespaceGenerations
from retrieval_testkit.in_memory_vector_index import InMemoryVectorIndex


def in_memory_container(settings: Settings, **replacements: object) -> Container:
    """A ``Container`` whose embedder hashes words and whose stores live in memory (the
    keyword index stays the embedded one, under ``settings.data_dir``). ``replacements``
    overrides providers by name with the objects given, these defaults included."""
    doubles: dict[str, object] = {
        "model_embedder": HashEmbedder(),
        "vector_index": InMemoryVectorIndex(),
    }
    return without_mongodb(settings, **(doubles | replacements))


def without_mongodb(settings: Settings, **replacements: object) -> Container:
    """A ``Container`` whose MongoDB stores (chunk texts, ledger, embedding and extraction
    caches, namespace generations, graph) live in memory; the model and the indexes are the
    configured ones.
    ``replacements`` overrides providers by name with the objects given, these included."""
    doubles: dict[str, object] = {
        "embedding_cache": InMemoryEmbeddingCache(),
        "extraction_cache": InMemoryExtractionCache(),
        "document_ledger": InMemoryDocumentLedger(),
        "chunk_repository": InMemoryChunkRepository(),
        "namespace_generations": InMemoryNamespaceGenerations(),
        "graph_store": InMemoryGraphStore(),
        "mongo_uri": None,
        "mongo_client": None,
    }
    container = Container(settings=settings)
    container.override_providers(
        **{name: providers.Object(value) for name, value in (doubles | replacements).items()}
    )
    return container
