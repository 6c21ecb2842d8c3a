"""Who may open the console: the tenant tokens ``retrieval serve`` takes.

With ``RETRIEVAL_GRPC_AUTH_TOKEN`` or ``RETRIEVAL_GRPC_TOKENS_FILE`` set, every page but the
sign-in page needs a known bearer token, in the ``Authorization`` header or in the cookie the
sign-in page sets, whose grant holds ``read`` (``retrieval.domain.tenants``). A page about one
namespace needs the grant to cover it, and the namespaces page lists only those it covers.
Without tokens, the console listens on loopback alone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import urlencode

import structlog
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from retrieval.domain.tenants import Grant, Scope, Tenants, authorise
from retrieval.errors import ConfigurationError
from retrieval.grpc.access import is_loopback
from retrieval.grpc.tenancy import CALLER, bearer_token, calling_as

log = structlog.get_logger("console")

TOKEN_COOKIE = "retrieval_token"
SIGN_IN_PATH = "/login"

Page = Callable[[Request], Awaitable[Response]]


def check_exposure(host: str, tenants: Tenants | None) -> None:
    """``ConfigurationError`` for a console without tokens on ``host`` beyond loopback."""
    if tenants is None and not is_loopback(host):
        raise ConfigurationError(
            f"refusing to serve the console on {host} without authentication: set "
            "RETRIEVAL_GRPC_TOKENS_FILE or RETRIEVAL_GRPC_AUTH_TOKEN, or listen on loopback "
            "(--host 127.0.0.1)"
        )


def presented_token(request: Request) -> str | None:
    header = bearer_token(request.headers.get("authorization"))
    return header or request.cookies.get(TOKEN_COOKIE) or None


def check_read(namespace: str | None) -> None:
    """``PermissionDeniedError`` unless the caller may read ``namespace`` (None: no namespace
    in particular). Anyone may when the console takes no tokens."""
    grant = CALLER.get()
    if grant is not None:
        authorise(grant, Scope.READ, namespace)


def safe_next(target: str | None) -> str:
    """Where to go after signing in: a path of this console, never another site."""
    if target and target.startswith("/") and not target.startswith(("//", "/\\")):
        return target
    return "/"


class Gate:
    """Lets a request through to a page as the grant of its token, when tokens are configured."""

    def __init__(self, tenants: Tenants | None) -> None:
        self.tenants = tenants

    def grant_of(self, token: str | None) -> Grant | None:
        if self.tenants is None or token is None:
            return None
        return self.tenants.grant_for(token)

    def __call__(self, page: Page) -> Page:
        if self.tenants is None:
            return page

        async def guarded(request: Request) -> Response:
            grant = self.grant_of(presented_token(request))
            if grant is None:
                log.warning("console.unauthenticated", path=request.url.path)
                return refusal(request)
            with calling_as(grant):
                check_read(None)
                return await page(request)

        return guarded


def refusal(request: Request) -> Response:
    """401 to a script that sent an unknown token; the sign-in page to a browser."""
    if "authorization" in request.headers:
        return PlainTextResponse(
            "a known bearer token is required (header 'Authorization: Bearer <token>')",
            status_code=401,
            headers={"WWW-Authenticate": "Bearer"},
        )
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"{SIGN_IN_PATH}?{urlencode({'next': target})}", status_code=303)
