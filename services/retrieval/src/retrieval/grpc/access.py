"""What the server settles before it listens: the tokens it accepts, and that it listens
beyond loopback only with one configured (or ``RETRIEVAL_GRPC_ALLOW_UNAUTHENTICATED``)."""

from __future__ import annotations

import ipaddress

import structlog

from retrieval.domain.tenants import (
    Tenants,
    admin_grant,
    grants_from_json,
    word_extending_patterns,
)
from retrieval.errors import ConfigurationError, TokensFileError
from retrieval.grpc.settings import GrpcSettings

log = structlog.get_logger("grpc")

AUTH_TOKEN_NAME = "auth-token"
"""The name ``RETRIEVAL_GRPC_AUTH_TOKEN`` goes by in logs; a file entry of that name clashes."""


def load_tenants(settings: GrpcSettings) -> Tenants | None:
    """The grants of the tokens file and of the auth token (admin on every namespace);
    None when neither is set. ``TokensFileError`` names what is wrong with the file."""
    if not settings.authenticates:
        return None
    grants = []
    source = "RETRIEVAL_GRPC_AUTH_TOKEN"
    if settings.tokens_file is not None:
        source = str(settings.tokens_file)
        try:
            text = settings.tokens_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise TokensFileError(f"{source}: cannot be read: {error}") from error
        grants.extend(grants_from_json(text, source))
    if settings.auth_token is not None:
        grants.append(admin_grant(AUTH_TOKEN_NAME, settings.auth_token.get_secret_value()))
    for name, pattern in word_extending_patterns(grants):
        log.warning(
            "tokens.pattern_extends_a_word",
            token=name,
            pattern=pattern,
            hint="the wildcard follows a letter or digit, so it also grants namespaces that "
            "merely start the same way; end the fixed part with a separator ('tenant-a-*')",
        )
    return Tenants(grants, source)


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback address (``127.0.0.0/8``, ``::1``), bracketed or not."""
    name = host.removeprefix("[").removesuffix("]")
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_exposure(address: str, authenticated: bool, allow_unauthenticated: bool) -> None:
    """Raise ``ConfigurationError`` for a server without tokens on ``address`` (``host:port``)
    beyond loopback, unless unauthenticated access is allowed explicitly."""
    host = address.rpartition(":")[0]
    if authenticated or allow_unauthenticated or is_loopback(host):
        return
    raise ConfigurationError(
        f"refusing to serve {address} without authentication: set RETRIEVAL_GRPC_TOKENS_FILE "
        "or RETRIEVAL_GRPC_AUTH_TOKEN, listen on loopback (RETRIEVAL_GRPC_HOST=127.0.0.1 or "
        "[::1]), or set RETRIEVAL_GRPC_ALLOW_UNAUTHENTICATED=true"
    )
