"""One contract suite per port: subclass it in a test module and provide the fixture."""

from retrieval_testkit.contracts.chunk_repository import ChunkRepositoryContract
from retrieval_testkit.contracts.embedder import EmbedderContract
from retrieval_testkit.contracts.entity_extractor import EntityExtractorContract
from retrieval_testkit.contracts.index_lsns import IndexLsnsContract
from retrieval_testkit.contracts.keyword_index import KeywordIndexContract
from retrieval_testkit.contracts.llm import LlmContract
from retrieval_testkit.contracts.namespace_generations import NamespaceGenerationsContract
from retrieval_testkit.contracts.reranker import RerankerContract
from retrieval_testkit.contracts.vector_index import VectorIndexContract

__all__ = [
    "ChunkRepositoryContract",
    "EmbedderContract",
    "EntityExtractorContract",
    "IndexLsnsContract",
    "KeywordIndexContract",
    "LlmContract",
    "NamespaceGenerationsContract",
    "RerankerContract",
    "VectorIndexContract",
]
