"""Settings of the gRPC server from the environment (prefix ``RETRIEVAL_GRPC_``)."""

from __future__ import annotations

from pathlib import Path
from typing import Self

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from retrieval.grpc.channels import DEFAULT_MAX_MESSAGE_BYTES


class GrpcSettings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="RETRIEVAL_GRPC_", env_file=".env", extra="ignore", frozen=True
    )

    host: str = Field(
        default="127.0.0.1",
        description="Interface to listen on; one other than loopback needs a token configured "
        "(or allow_unauthenticated).",
    )
    port: int = Field(default=50051, ge=0, le=65535, description="0 picks a free port.")
    auth_token: SecretStr | None = Field(
        default=None,
        description="A bearer token with every scope on every namespace (token name "
        "'auth-token'); when it or tokens_file is set, every call but health checks needs a token.",
    )
    tokens_file: Path | None = Field(
        default=None,
        description="JSON list of tenant tokens: name, sha256 of the token, namespace patterns "
        "and scopes (read, write, admin); checked at start-up.",
    )
    allow_unauthenticated: bool = Field(
        default=False,
        description="Listen on an interface other than loopback with no token configured.",
    )
    tls_cert_file: Path | None = Field(default=None, description="PEM certificate chain.")
    tls_key_file: Path | None = Field(default=None, description="PEM private key of the cert.")
    tls_client_ca_file: Path | None = Field(
        default=None, description="PEM CA bundle; when set, clients must present a cert it signed."
    )
    max_message_bytes: int = Field(
        default=DEFAULT_MAX_MESSAGE_BYTES, ge=1024, description="Largest message either way."
    )
    grace_seconds: float = Field(
        default=10.0, ge=0, description="How long shutdown waits for in-flight calls."
    )
    max_documents_per_call: int = Field(
        default=1000,
        ge=1,
        description="Most documents one IngestDocuments call carries; a larger one is refused "
        "with INVALID_ARGUMENT before anything is written (send several calls).",
    )
    max_in_flight: int = Field(
        default=128,
        ge=1,
        description="Calls answered at once; beyond, a call is refused at once with "
        "RESOURCE_EXHAUSTED (health checks never are).",
    )

    @field_validator("auth_token")
    @classmethod
    def token_not_blank(cls, token: SecretStr | None) -> SecretStr | None:
        if token is not None and not token.get_secret_value().strip():
            raise ValueError("must not be blank; unset it to turn authentication off")
        return token

    @model_validator(mode="after")
    def tls_files_complete(self) -> Self:
        if (self.tls_cert_file is None) != (self.tls_key_file is None):
            raise ValueError("tls_cert_file and tls_key_file go together")
        if self.tls_client_ca_file is not None and self.tls_cert_file is None:
            raise ValueError("tls_client_ca_file needs tls_cert_file and tls_key_file")
        return self

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def authenticates(self) -> bool:
        """Whether calls need a bearer token: a tokens file or the auth token is set."""
        return self.tokens_file is not None or self.auth_token is not None
