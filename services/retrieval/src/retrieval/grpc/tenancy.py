"""Who is calling, and whether they may: a bearer token's grant, checked before the servicer.

``TokenInterceptor`` refuses a call without a known token (UNAUTHENTICATED), binds the
caller's grant for the call (``CALLER``, and ``token_name`` on every log line), and refuses
a call whose scope or namespace the grant does not hold (PERMISSION_DENIED). Writes are
logged with the token's name. Health checks stay open; reflection needs a known token.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import grpc
import structlog
from google.protobuf.message import Message

from retrieval.domain.tenants import Grant, Scope, Tenants, authorise
from retrieval.errors import PermissionDeniedError
from retrieval.grpc.errors import status_of
from retrieval.grpc.interceptors import (
    Behaviour,
    Continuation,
    behaviour_of,
    service_and_method,
    with_behaviour,
)
from retrieval.grpc.metadata import AUTHORIZATION_KEY, metadata_value

log = structlog.get_logger("grpc")

OPEN_METHOD_PREFIXES = ("/grpc.health.v1.Health/",)
"""Methods any caller may call, so probes need no secret."""

METHOD_SCOPES = {
    "Retrieve": Scope.READ,
    "BuildContext": Scope.READ,
    "Answer": Scope.READ,
    "AnswerStream": Scope.READ,
    "Validate": Scope.READ,
    "GetStats": Scope.READ,
    "ListDocuments": Scope.READ,
    "IngestDocuments": Scope.WRITE,
    "DeleteDocument": Scope.WRITE,
    "SyncDocuments": Scope.WRITE,
    "DeleteDocuments": Scope.WRITE,
    "DeleteNamespace": Scope.ADMIN,
    "BackupNamespace": Scope.ADMIN,
    "RestoreNamespace": Scope.ADMIN,
}
"""The scope each method needs; a method missing here needs ``admin``."""

CALLER: ContextVar[Grant | None] = ContextVar("retrieval_caller", default=None)
"""The grant of the call being served; None when the server takes no tokens."""


@contextmanager
def calling_as(grant: Grant) -> Iterator[None]:
    """``grant`` is the caller, and ``token_name`` is on every log line, until the exit."""
    reset = CALLER.set(grant)
    try:
        with structlog.contextvars.bound_contextvars(token_name=grant.name):
            yield
    finally:
        CALLER.reset(reset)


def visible_namespaces() -> Callable[[str], bool] | None:
    """Which namespaces the caller may see in GetStats: None for all of them (no tokens
    configured, or a grant on ``*``)."""
    grant = CALLER.get()
    return None if grant is None or grant.every_namespace else grant.covers


def bearer_token(header: str | None) -> str | None:
    """The token of ``authorization: Bearer <token>`` (any case of the scheme), or None."""
    scheme, _, credentials = (header or "").partition(" ")
    token = credentials.strip()
    return token if scheme.lower() == "bearer" and token else None


def requested_namespace(request: Any, default: str) -> str | None:
    """The namespace a request is about: its ``namespace`` field, or its ``retrieval``'s
    (BuildContext, Answer, AnswerStream), ``default`` when empty; None when it has none
    (GetStats), or there is no request to read (an empty stream, bytes that do not decode:
    the method refuses those)."""
    if not isinstance(request, Message):
        return None
    fields = request.DESCRIPTOR.fields_by_name
    if "retrieval" in fields:
        return requested_namespace(request.retrieval, default)
    if "namespace" not in fields:
        return None
    return request.namespace or default


class TokenInterceptor(grpc.aio.ServerInterceptor):
    """Authenticates every call but health checks, and authorises the calls of ``service``."""

    def __init__(self, tenants: Tenants, service: str, default_namespace: str) -> None:
        self._tenants = tenants
        self._service = service
        self._default_namespace = default_namespace

    async def intercept_service(
        self, continuation: Continuation, handler_call_details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler | None:
        handler = await continuation(handler_call_details)
        method = handler_call_details.method
        if handler is None or method.startswith(OPEN_METHOD_PREFIXES):
            return handler
        header = metadata_value(handler_call_details.invocation_metadata, AUTHORIZATION_KEY)
        token = bearer_token(header)
        grant = None if token is None else self._tenants.grant_for(token)
        if grant is None:
            return with_behaviour(handler, unauthenticated(method))
        service, name = service_and_method(method)
        if service != self._service:
            return handler
        scope = METHOD_SCOPES.get(name, Scope.ADMIN)
        behaviour = behaviour_of(handler)
        assert behaviour is not None, f"{method}: the service has no bidirectional stream"
        streaming = handler.request_streaming
        return with_behaviour(handler, self.authorised(behaviour, grant, scope, name, streaming))

    def authorised(
        self, behaviour: Behaviour, grant: Grant, scope: Scope, name: str, streaming: bool
    ) -> Behaviour:
        """``behaviour`` as ``grant``, once the grant is found to hold ``scope`` in the
        request's namespace: for requests that stream in, the first one's
        (``RestoreNamespace`` names it there)."""

        async def checked(request: Any, context: grpc.aio.ServicerContext) -> Any:
            if streaming:
                first = await anext(aiter(request), None)
                request = resumed(first, request)
            else:
                first = request
            namespace = requested_namespace(first, self._default_namespace)
            with calling_as(grant):
                try:
                    authorise(grant, scope, namespace)
                except PermissionDeniedError as error:
                    log.warning(
                        "grpc.permission_denied", method=name, scope=scope, namespace=namespace
                    )
                    code, message, _ = status_of(error)
                    await context.abort(code, message, context.trailing_metadata())
                if scope is not Scope.READ:
                    log.info("grpc.write", method=name, namespace=namespace)
                return await behaviour(request, context)

        return checked


async def resumed(first: Any, rest: AsyncIterator[Any]) -> AsyncIterator[Any]:
    """``first`` (unless None: the stream was empty), then what ``rest`` still holds."""
    if first is None:
        return
    yield first
    async for message in rest:
        yield message


def unauthenticated(method: str) -> Behaviour:
    async def refuse(request: Any, context: grpc.aio.ServicerContext) -> None:
        log.warning("grpc.unauthenticated", method=method)
        await context.abort(
            grpc.StatusCode.UNAUTHENTICATED,
            "a known bearer token is required (metadata 'authorization: Bearer <token>')",
            context.trailing_metadata(),
        )

    return refuse
