"""Pinecone SDK errors become ours, what can pass is tried again, and every call ends within a
known time.

Translation (``raise ... from`` the SDK error)::

    401 UnauthorizedError, 403 ForbiddenError     -> NotAuthorisedError
    404 NotFoundError                             -> IndexNotFoundError (the adapter turns
                                                     a missing namespace into its own answer)
    413 PayloadTooLargeError                      -> PayloadTooLargeError
    429 RateLimitError                            -> RateLimitedError (.retry_after)
    5xx ServiceError, PineconeConnectionError     -> BackendUnavailableError
    PineconeTimeoutError, 408, our deadline       -> BackendTimeoutError
    400 / 422, client-side validation             -> InvalidRequestError
    anything else (402, 409, 412, bad response)   -> BackendError

Retries. The SDK's own are off (``pinecone_clients``): its loop sleeps whatever
Retry-After the server sends, up to 90 s, past any deadline. Instead ``RETRIES``
(``retrieval.retries``) tries a call again after 408, 429, 5xx, a timeout or a connection
error, at most 4 attempts in all, waiting the server's Retry-After when a 429 gives one and
a random part of 0.5, 1, 2 s otherwise. A pause that would leave less than
``request_timeout`` before the end of ``call_timeout`` is not taken: the failure is raised
at once, so a Retry-After longer than the time left (or than 60 s) ends the call at once
with ``RateLimitedError`` carrying it.

Time bound. Each attempt is bounded by the client timeout ``request_timeout`` (httpx's
connect/read/write timeouts), and each call as a whole, pauses included, by
``call_timeout`` (``asyncio.timeout``). So one call returns or raises within

    min(call_timeout, 4 x request_timeout + 3.5 s of backoff)

when the server sends no Retry-After, and within ``call_timeout`` in every case.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from pinecone.errors import (
    ApiError,
    ForbiddenError,
    NotFoundError,
    PineconeConnectionError,
    PineconeError,
    PineconeTimeoutError,
    PineconeTypeError,
    PineconeValueError,
    RateLimitError,
    ServiceError,
    UnauthorizedError,
)
from pinecone.errors import PayloadTooLargeError as SdkPayloadTooLargeError

from retrieval.errors import (
    BackendError,
    BackendTimeoutError,
    BackendUnavailableError,
    IndexNotFoundError,
    InvalidRequestError,
    NotAuthorisedError,
    PayloadTooLargeError,
    RateLimitedError,
    RetrievalError,
)
from retrieval.retries import RetryPolicy, retrying

T = TypeVar("T")

RETRIES = RetryPolicy(attempts=4, initial_backoff=0.5, max_backoff=4.0, max_retry_after=60.0)


def worst_case_seconds(request_timeout: float, call_timeout: float) -> float:
    """The longest one call can take when the server sends no Retry-After."""
    return min(call_timeout, RETRIES.attempts * request_timeout + RETRIES.worst_case_pauses())


def translate(error: PineconeError, what: str) -> RetrievalError:
    """Our error for an SDK error raised while doing ``what``."""
    message = f"{what}: {error}"
    if isinstance(error, UnauthorizedError | ForbiddenError):
        return NotAuthorisedError(message)
    if isinstance(error, NotFoundError):
        return IndexNotFoundError(message)
    if isinstance(error, SdkPayloadTooLargeError):
        return PayloadTooLargeError(message)
    if isinstance(error, RateLimitError):
        hint = error.retry_after
        return RateLimitedError(
            message, retry_after=hint if hint is not None and math.isfinite(hint) else None
        )
    if isinstance(error, ServiceError | PineconeConnectionError):
        return BackendUnavailableError(message)
    if isinstance(error, PineconeTimeoutError):
        return BackendTimeoutError(message)
    if isinstance(error, PineconeValueError | PineconeTypeError):
        return InvalidRequestError(message)
    if isinstance(error, ApiError) and error.status_code == 408:
        return BackendTimeoutError(message)
    if isinstance(error, ApiError) and error.status_code in {400, 422}:
        return InvalidRequestError(message)
    return BackendError(message)


async def bounded(
    call: Callable[[], Awaitable[T]], *, what: str, request_timeout: float, call_timeout: float
) -> T:
    """What ``call()`` (one SDK call) returns, tried again as ``RETRIES`` says, all within
    ``call_timeout`` seconds; its errors translated."""

    async def attempt(left: float) -> T:
        try:
            return await call()
        except PineconeError as error:
            raise translate(error, what) from error

    try:
        async with asyncio.timeout(call_timeout):
            return await retrying(
                attempt,
                policy=RETRIES,
                deadline=time.monotonic() + call_timeout,
                what=what,
                room=request_timeout,
            )
    except TimeoutError as error:
        raise BackendTimeoutError(f"{what}: no answer within {call_timeout:g} s") from error
