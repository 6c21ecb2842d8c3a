"""Service errors to gRPC status codes on the server, and status codes back to errors on the client.

==============================  =====================  ==============================
server raises                   status                 client raises
==============================  =====================  ==============================
InvalidRequestError             INVALID_ARGUMENT       InvalidRequestError (same text)
MassDeleteError                 FAILED_PRECONDITION    MassDeleteError (same text)
IndexNotFoundError              FAILED_PRECONDITION    BackendNotConfiguredError
NotFoundError                   NOT_FOUND              NotFoundError
BackendTimeoutError             DEADLINE_EXCEEDED      BackendTimeoutError
RateLimitedError                UNAVAILABLE            RateLimitedError (retry_after)
BackendUnavailableError         UNAVAILABLE            BackendUnavailableError
DocumentBusyError               ABORTED                DocumentBusyError (same text)
BackendNotConfiguredError       FAILED_PRECONDITION    BackendNotConfiguredError (same)
PermissionDeniedError           PERMISSION_DENIED      PermissionDeniedError (same text)
NotAuthorisedError (a store's)  FAILED_PRECONDITION    BackendNotConfiguredError
anything else                   INTERNAL               BackendError
(bearer token refused)          UNAUTHENTICATED        NotAuthorisedError
(message over the size limit)   RESOURCE_EXHAUSTED     PayloadTooLargeError
(calls in flight at the limit)  RESOURCE_EXHAUSTED     RateLimitedError (retry_after)
==============================  =====================  ==============================

An INVALID_ARGUMENT names the failing field in its message and in the trailing metadata
``x-error-field``. A sync that would delete too much of a namespace is no malformed request
but a state of the namespace: FAILED_PRECONDITION, with ``x-error-field: allow_mass_delete``,
the flag that lets it through.

A call with a deadline is stopped a little before it (a tenth of the time left, at most a
quarter second) and answers DEADLINE_EXCEEDED itself, with its correlation id: the caller
hears the server instead of its own timer, and no work goes on for a caller that has stopped
waiting. A write stopped so gets half of that margin to leave the stores in order
(``retrieval.deadlines``); what it cannot undo in that time its ledger
records leave to the repair (``docs/reliability.md``, "A write stopped by its deadline").

UNAVAILABLE, DEADLINE_EXCEEDED and INTERNAL carry generic
messages only; the cause is logged with the call's correlation id. So does a store that refuses the
service's own credentials (Pinecone's 401 or 403, MongoDB's authentication) or has no index
where the service is configured to find one (Pinecone's 404): the caller can do nothing about
either, so it is FAILED_PRECONDITION, which clients do not retry, never INTERNAL, NOT_FOUND or
UNAUTHENTICATED (those speak of the caller's own request and token); the cause is logged as an
error, for the operator to fix the configuration. A backend that asked to slow down for a
known time (a 429 with ``Retry-After``) gives UNAVAILABLE, which clients retry, with the
seconds to wait in the trailing metadata ``x-retry-after-s`` (a decimal number): the client
raises ``RateLimitedError`` with that ``retry_after``, and waits it out before retrying when
its deadline allows, not sooner. RESOURCE_EXHAUSTED is the caller's own message size, or,
with ``x-retry-after-s``, a server already answering ``RETRIEVAL_GRPC_MAX_IN_FLIGHT`` calls
(``retrieval.grpc.admission``): a ``RateLimitedError`` too.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import TypeVar

import grpc
import structlog

from retrieval.deadlines import working_for
from retrieval.errors import (
    BackendError,
    BackendNotConfiguredError,
    BackendTimeoutError,
    BackendUnavailableError,
    DocumentBusyError,
    IndexNotFoundError,
    InvalidRequestError,
    MassDeleteError,
    NotAuthorisedError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    RateLimitedError,
    RetrievalError,
)
from retrieval.grpc.metadata import ERROR_FIELD_KEY, RETRY_AFTER_KEY, metadata_value
from retrieval.retries import retry_after_seconds

log = structlog.get_logger("grpc")

INTERNAL_MESSAGE = "internal error; quote the x-correlation-id when reporting it"
UNAVAILABLE_MESSAGE = "a store is unavailable; try again later"
TIMEOUT_MESSAGE = "a store gave no answer in time"
DEADLINE_MARGIN_S = 0.25
DEADLINE_PASSED = BackendTimeoutError("the stores gave no answer before the call's deadline")
RATE_LIMITED_MESSAGE = f"a store asks to slow down; try again after {RETRY_AFTER_KEY} seconds"
MISCONFIGURED_MESSAGE = (
    "a store refused the service's credentials or lacks its index; "
    "the service's configuration needs fixing"
)

MASS_DELETE_FIELD = "allow_mass_delete"

Servicer = TypeVar("Servicer")
Request = TypeVar("Request")
Response = TypeVar("Response")
Handler = Callable[[Servicer, Request, grpc.aio.ServicerContext], Awaitable[Response]]


class RemoteMassDeleteError(MassDeleteError):
    """``MassDeleteError`` as a server reported it: the same message, which carries the
    figures; ``doomed`` and ``total`` are not sent."""

    def __init__(self, reason: str) -> None:
        InvalidRequestError.__init__(self, reason, field=MASS_DELETE_FIELD)


def status_of(error: Exception) -> tuple[grpc.StatusCode, str, tuple[tuple[str, str], ...]]:
    """Status code, message and extra trailing metadata a client sees for ``error``."""
    if isinstance(error, MassDeleteError):
        return (
            grpc.StatusCode.FAILED_PRECONDITION,
            str(error),
            ((ERROR_FIELD_KEY, MASS_DELETE_FIELD),),
        )
    if isinstance(error, InvalidRequestError):
        field = ((ERROR_FIELD_KEY, error.field),) if error.field else ()
        return grpc.StatusCode.INVALID_ARGUMENT, str(error), field
    if misconfigured(error):
        return grpc.StatusCode.FAILED_PRECONDITION, MISCONFIGURED_MESSAGE, ()
    if isinstance(error, NotFoundError):
        return grpc.StatusCode.NOT_FOUND, str(error), ()
    if isinstance(error, BackendTimeoutError):
        return grpc.StatusCode.DEADLINE_EXCEEDED, TIMEOUT_MESSAGE, ()
    if isinstance(error, RateLimitedError) and error.retry_after is not None:
        hint = ((RETRY_AFTER_KEY, f"{error.retry_after:g}"),)
        return grpc.StatusCode.UNAVAILABLE, RATE_LIMITED_MESSAGE, hint
    if isinstance(error, BackendUnavailableError):
        return grpc.StatusCode.UNAVAILABLE, UNAVAILABLE_MESSAGE, ()
    if isinstance(error, DocumentBusyError):
        return grpc.StatusCode.ABORTED, str(error), ()
    if isinstance(error, BackendNotConfiguredError):
        return grpc.StatusCode.FAILED_PRECONDITION, str(error), ()
    if isinstance(error, PermissionDeniedError):
        return grpc.StatusCode.PERMISSION_DENIED, str(error), ()
    return grpc.StatusCode.INTERNAL, INTERNAL_MESSAGE, ()


def misconfigured(error: Exception) -> bool:
    """A store refused the service's credentials, or has no index where it should be."""
    refused = isinstance(error, NotAuthorisedError) and not isinstance(error, PermissionDeniedError)
    return refused or isinstance(error, IndexNotFoundError)


def log_failure(method: str, code: grpc.StatusCode, error: Exception) -> None:
    if code is grpc.StatusCode.INTERNAL:
        log.error("grpc.internal_error", method=method, exc_info=error)
    elif misconfigured(error):
        log.error("grpc.store_misconfigured", method=method, error=str(error))
    elif code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        log.warning("grpc.backend_failed", method=method, code=code.name, error=str(error))
    else:
        log.info("grpc.rejected", method=method, code=code.name, error=str(error))


def translate_errors(
    handler: Handler[Servicer, Request, Response],
) -> Handler[Servicer, Request, Response]:
    """Turn what a servicer method raises into a status; cancellation passes through. A call
    with a deadline is stopped shortly before it (``answer_by``) and answers
    DEADLINE_EXCEEDED itself, so the caller gets the status and its correlation id, and the
    work stops when the caller stops waiting; a write stopped so leaves the stores in order
    within ``undo_time``, before the answer goes."""

    @functools.wraps(handler)
    async def translated(
        servicer: Servicer, request: Request, context: grpc.aio.ServicerContext
    ) -> Response:
        remaining = context.time_remaining()
        try:
            async with working_for(answer_by(remaining), undo_time(remaining)) as scope:
                return await handler(servicer, request, context)
        except Exception as raised:
            error = DEADLINE_PASSED if scope.expired() else raised
            code, message, extra = status_of(error)
            log_failure(handler.__name__, code, error)
        return await context.abort(code, message, (*(context.trailing_metadata() or ()), *extra))

    return translated


def answer_by(remaining_s: float | None) -> float | None:
    """Seconds the server may work on a call with ``remaining_s`` left before its deadline
    (None: no deadline): a tenth less, and at most ``DEADLINE_MARGIN_S`` less, so that the
    answer reaches the caller in time."""
    if remaining_s is None:
        return None
    return max(remaining_s - margin(remaining_s), 0.0)


def undo_time(remaining_s: float | None) -> float:
    """Seconds a write stopped at ``answer_by`` gets to leave the stores in order: half the
    margin, the other half left for the answer to reach the caller."""
    return 0.0 if remaining_s is None else margin(remaining_s) / 2


def margin(remaining_s: float) -> float:
    return min(DEADLINE_MARGIN_S, remaining_s / 10)


ERROR_OF_STATUS: dict[grpc.StatusCode, type[RetrievalError]] = {
    grpc.StatusCode.NOT_FOUND: NotFoundError,
    grpc.StatusCode.DEADLINE_EXCEEDED: BackendTimeoutError,
    grpc.StatusCode.UNAVAILABLE: BackendUnavailableError,
    grpc.StatusCode.ABORTED: DocumentBusyError,
    grpc.StatusCode.FAILED_PRECONDITION: BackendNotConfiguredError,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDeniedError,
    grpc.StatusCode.UNAUTHENTICATED: NotAuthorisedError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: PayloadTooLargeError,
}
"""The error a status stands for, when its details are all the error holds."""


def error_from_rpc(error: grpc.aio.AioRpcError) -> RetrievalError:
    """The service error a failed call stands for, as the in-process call would raise it."""
    code, details = error.code(), error.details() or ""
    field = metadata_value(error.trailing_metadata(), ERROR_FIELD_KEY)
    reason = details.removeprefix(f"{field}: ") if field else details
    if code is grpc.StatusCode.INVALID_ARGUMENT:
        return InvalidRequestError(reason, field=field)
    if code is grpc.StatusCode.FAILED_PRECONDITION and field == MASS_DELETE_FIELD:
        return RemoteMassDeleteError(reason)
    hint = retry_after_seconds(metadata_value(error.trailing_metadata(), RETRY_AFTER_KEY))
    if hint is not None and code in (
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    ):
        return RateLimitedError(details, retry_after=hint)
    error_of_status = ERROR_OF_STATUS.get(code)
    if error_of_status is None:
        return BackendError(f"{code.name}: {details}")
    return error_of_status(details)
