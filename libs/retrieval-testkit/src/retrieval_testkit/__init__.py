"""Test doubles and contract suites for the retrieval service's ports."""

from retrieval_testkit.hash_embedder import HashEmbedder
from retrieval_testkit.in_memory_chunk_repository import InMemoryChunkRepository
from retrieval_testkit.in_memory_document_ledger import InMemoryDocumentLedger
from retrieval_testkit.in_memory_embedding_cache import InMemoryEmbeddingCache
from retrieval_testkit.in_memory_extraction_cache import InMemoryExtractionCache
from retrieval_testkit.in_memory_graph_store import InMemoryGraphStore
from retrieval_testkit.in_memory_keyword_index import InMemoryKeywordIndex
from retrieval_testkit.in_memory_namespace_generations import InMemoryNamespaceGenerations
from retrieval_testkit.in_memory_reranker import RerankCall, WordOverlapReranker
from retrieval_testkit.in_memory_vector_index import InMemoryVectorIndex
from retrieval_testkit.openai_standin import OpenAiStandIn
from retrieval_testkit.scripted_llm import ChatRequest, ScriptedLlm

__all__ = [
    "ChatRequest",
    "HashEmbedder",
    "InMemoryChunkRepository",
    "InMemoryDocumentLedger",
    "InMemoryEmbeddingCache",
    "InMemoryExtractionCache",
    "InMemoryGraphStore",
    "InMemoryKeywordIndex",
    "InMemoryNamespaceGenerations",
    "InMemoryVectorIndex",
    "OpenAiStandIn",
    "RerankCall",
    "ScriptedLlm",
    "WordOverlapReranker",
]
