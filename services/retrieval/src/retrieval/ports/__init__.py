"""The capabilities the services need, as structural protocols."""

from retrieval.ports.chunk_repository import ChunkRepository
from retrieval.ports.embedder import Embedder
from retrieval.ports.keyword_index import KeywordIndex
from retrieval.ports.vector_index import MetadataFilter, VectorIndex

__all__ = ["ChunkRepository", "Embedder", "KeywordIndex", "MetadataFilter", "VectorIndex"]
