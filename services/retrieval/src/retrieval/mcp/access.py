"""Who is calling an MCP tool, and whether they may.

Over streamable HTTP every call carries a bearer token of the tenants file
(``RETRIEVAL_GRPC_TOKENS_FILE``, ``RETRIEVAL_GRPC_AUTH_TOKEN``), checked by the SDK's bearer
middleware through ``TenantTokenVerifier``; each tool then asks ``TokenAccess`` whether the
token's grant holds the scope in the namespace, as the gRPC server does. Over stdio the local
user calls, with ``LocalAccess``: the namespaces of ``RETRIEVAL_MCP_NAMESPACES`` (all when
empty), and writes only with ``retrieval mcp --allow-writes``.
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import Protocol

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken

from retrieval.domain.tenants import Grant, Scope, Tenants, authorise
from retrieval.errors import PermissionDeniedError


class Access(Protocol):
    """What the caller of the current tool call may do."""

    def check(self, scope: Scope, namespace: str) -> None:
        """Raise ``PermissionDeniedError`` unless the caller holds ``scope`` in ``namespace``."""
        ...

    def may_write(self) -> bool:
        """Whether the caller may call the tools that write."""
        ...


class LocalAccess:
    """The local user of ``retrieval mcp`` over stdio."""

    def __init__(self, namespaces: Sequence[str], writes: bool) -> None:
        """``namespaces``: fnmatch patterns, every namespace when empty."""
        self._namespaces = tuple(namespaces)
        self._writes = writes

    def check(self, scope: Scope, namespace: str) -> None:
        if scope is not Scope.READ and not self._writes:
            raise PermissionDeniedError(
                "this server reads only: start it with `retrieval mcp --allow-writes` to write"
            )
        if self._namespaces and not any(fnmatchcase(namespace, p) for p in self._namespaces):
            raise PermissionDeniedError(
                f"namespace {namespace!r} is not one of RETRIEVAL_MCP_NAMESPACES "
                f"{list(self._namespaces)}"
            )

    def may_write(self) -> bool:
        return self._writes


class TenantTokenVerifier:
    """The SDK's ``TokenVerifier`` over the tenants file: a known token is an access token
    named by its grant, with the grant's scopes."""

    def __init__(self, tenants: Tenants) -> None:
        self._tenants = tenants

    async def verify_token(self, token: str) -> AccessToken | None:
        grant = self._tenants.grant_for(token)
        if grant is None:
            return None
        scopes = sorted(scope.value for scope in grant.scopes)
        return AccessToken(token=token, client_id=grant.name, scopes=scopes)


class TokenAccess:
    """The holder of the bearer token of the current HTTP request."""

    def __init__(self, tenants: Tenants) -> None:
        self._tenants = tenants

    def grant(self) -> Grant:
        token = get_access_token()
        grant = None if token is None else self._tenants.grant_for(token.token)
        if grant is None:
            raise PermissionDeniedError("a known bearer token is required")
        return grant

    def check(self, scope: Scope, namespace: str) -> None:
        authorise(self.grant(), scope, namespace)

    def may_write(self) -> bool:
        return self.grant().holds(Scope.WRITE)
