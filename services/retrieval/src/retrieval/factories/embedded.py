"""The embedded stores: the vector and keyword indexes in the data directory, and what the
embedded stores occupy on disk."""

from __future__ import annotations

from typing import TYPE_CHECKING

from retrieval.ports.store_footprint import StoreFootprint
from retrieval.settings import Settings

if TYPE_CHECKING:
    from retrieval.adapters.embedded_index.bm25_keyword_index import Bm25KeywordIndex
    from retrieval.adapters.embedded_index.vector_index import EmbeddedVectorIndex


def embedded_vector_index(settings: Settings) -> EmbeddedVectorIndex:
    from retrieval.adapters.embedded_index.vector_index import EmbeddedVectorIndex

    return EmbeddedVectorIndex(settings.index_dir, ann_min_vectors=settings.index_ann_min_vectors)


def bm25_keyword_index(settings: Settings) -> Bm25KeywordIndex:
    from retrieval.adapters.embedded_index.bm25_keyword_index import Bm25KeywordIndex

    return Bm25KeywordIndex(settings.keyword_dir)


def store_footprints(settings: Settings, indexes: list[StoreFootprint]) -> list[StoreFootprint]:
    """The embedded stores configured: the indexes when embedded, and MongoDB when no URI is
    set. Production backends (Pinecone, a MongoDB server) occupy nothing here."""
    if settings.mongodb_uri is None:
        from retrieval.adapters.mongo.embedded_server import EmbeddedMongoStorage

        return [*indexes, EmbeddedMongoStorage(settings.mongo_dir)]
    return indexes
