"""Where the stores are and how they are reached: the MongoDB and Pinecone fields of
``Settings``, read from the same ``RETRIEVAL_*`` variables."""

from __future__ import annotations

from pydantic import BaseModel, Field, SecretStr


class MongoSettings(BaseModel):
    """MongoDB: the server, its database and collections, and the limits of a call."""

    mongodb_uri: SecretStr | None = Field(
        default=None, description="MongoDB URI; when unset, an embedded server is started."
    )
    mongodb_database: str = Field(default="retrieval", description="Database of chunk texts.")
    mongodb_collection: str = Field(default="chunks", description="Collection of chunk texts.")
    mongodb_timeout_ms: int = Field(default=5000, ge=100, description="Server selection/socket.")
    mongodb_operation_timeout_ms: int = Field(
        default=10_000, ge=100, description="Whole operation, retries included (timeoutMS)."
    )
    mongodb_ledger_collection: str = Field(
        default="documents", description="Collection of per-document ingestion records."
    )
    embedding_cache_collection: str = Field(
        default="embedding_cache", description="Collection of cached passage vectors."
    )
    graph_collection: str = Field(
        default="graph", description="Collection of the knowledge graph: entities per chunk."
    )
    extraction_cache_collection: str = Field(
        default="extraction_cache",
        description="Collection of cached knowledge extractions (the LLM graph extractor's).",
    )
    embedding_cache_ttl_days: int = Field(
        default=30, ge=1, description="Days a cached vector nobody uses is kept (TTL index)."
    )
    extraction_cache_ttl_days: int = Field(
        default=90, ge=1, description="Days a cached extraction nobody uses is kept (TTL index)."
    )
    embedding_cache_max_entries: int = Field(
        default=200_000, ge=0, description="Cached vectors kept at most; least recent go first."
    )
    mongodb_write_batch: int = Field(
        default=500, ge=1, le=10_000, description="Chunk texts per bulk write or delete."
    )
    mongodb_bulk_timeout_ms: int = Field(
        default=60_000, ge=100, description="One bulk write or delete batch, retries included."
    )
    mongodb_max_pool_size: int = Field(default=50, ge=1, description="Connections per server.")


class PineconeSettings(BaseModel):
    """Pinecone: the dense and sparse indexes, Inference's models, and the limits of a call."""

    pinecone_api_key: SecretStr | None = Field(
        default=None, description="Pinecone API key, for the index and for Inference."
    )
    pinecone_index_host: str | None = Field(
        default=None,
        description="Data-plane host of the index; must contain a dot or 'localhost'.",
    )
    pinecone_index_name: str | None = Field(
        default=None, description="Name of the index, for messages and logs."
    )
    pinecone_control_host: str | None = Field(
        default=None, description="Control-plane host serving /embed (default: Pinecone's API)."
    )
    pinecone_embed_model: str = Field(
        default="multilingual-e5-large", description="Pinecone Inference embedding model."
    )
    pinecone_embed_dimension: int = Field(
        default=1024, ge=1, description="Dimension of that model's vectors and of the index."
    )
    pinecone_embed_batch_size: int = Field(
        default=96, ge=1, le=96, description="Texts per Inference request."
    )
    pinecone_embed_concurrency: int = Field(
        default=2, ge=1, le=16, description="Inference requests in flight per call."
    )
    pinecone_upsert_concurrency: int = Field(
        default=4, ge=1, le=64, description="Upsert or delete requests in flight per call."
    )
    pinecone_sparse_index_host: str | None = Field(
        default=None,
        description="Data-plane host of the sparse (keyword) index: vector type sparse, "
        "metric dotproduct.",
    )
    pinecone_sparse_index_name: str | None = Field(
        default=None, description="Name of the sparse index, for messages and logs."
    )
    pinecone_sparse_model: str = Field(
        default="pinecone-sparse-english-v0", description="Inference model of sparse vectors."
    )
    pinecone_request_timeout_s: float = Field(
        default=5.0, gt=0, description="One HTTP attempt to Pinecone."
    )
    pinecone_call_timeout_s: float = Field(
        default=15.0, gt=0, description="One Pinecone call, its retries included."
    )
