"""Pinecone SDK errors become ours, and every SDK call ends within a known time.

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

Time bound. The SDK already retries (4 attempts on 408/429/5xx/timeouts/connection
errors, with jittered backoff of at most 0.75 + 2.25 + 6.75 s between them, or the
server's Retry-After capped at 60 s plus up to 50 %); nothing here retries again. Each
attempt is bounded by the client timeout ``request_timeout`` (httpx's connect/read/write
timeouts), and each SDK call as a whole, retries included, by ``call_timeout``
(``asyncio.timeout``). So one SDK call returns or raises within

    min(call_timeout, 4 x request_timeout + 9.75 s of backoff)

when the server sends no Retry-After, and within ``call_timeout`` in every case. A
Retry-After longer than the time left ends the call with ``BackendTimeoutError``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
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

T = TypeVar("T")

SDK_ATTEMPTS = 4
SDK_MAX_BACKOFF_S = 0.75 + 2.25 + 6.75


def worst_case_seconds(request_timeout: float, call_timeout: float) -> float:
    """The longest one SDK call can take when the server sends no Retry-After."""
    return min(call_timeout, SDK_ATTEMPTS * request_timeout + SDK_MAX_BACKOFF_S)


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
        return RateLimitedError(message, retry_after=error.retry_after)
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


async def bounded(call: Awaitable[T], *, what: str, call_timeout: float) -> T:
    """Await one SDK call within ``call_timeout`` seconds, its errors translated."""
    try:
        async with asyncio.timeout(call_timeout):
            return await call
    except PineconeError as error:
        raise translate(error, what) from error
    except TimeoutError as error:
        raise BackendTimeoutError(f"{what}: no answer within {call_timeout:g} s") from error
