"""Trying a remote call again when its failure can pass, within a deadline, as the server asks.

One loop for every caller of a remote service (the Pinecone adapters, the chat model, the
gRPC client). An attempt that fails with an error ``retryable`` accepts is tried again, at
most ``policy.attempts`` times in all, after a pause of

- the server's ``Retry-After`` when the failure carries one (``RateLimitedError.retry_after``);
- otherwise a random part of the n-th backoff, ``initial_backoff * multiplier**(n - 1)``
  capped at ``max_backoff`` (full jitter).

A pause is not taken when it would leave less than ``room`` seconds (what one attempt may
take) before the deadline: the failure is raised at once, as is a ``Retry-After`` over
``policy.max_retry_after``. Waiting would only end in a timeout; raised now, the failure says
what went wrong, and a ``RateLimitedError`` when to come back (``retry_after``). Any other
error is raised at once.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TypeVar

import structlog

from retrieval.errors import (
    BackendTimeoutError,
    BackendUnavailableError,
    RateLimitedError,
    RetrievalError,
)

log = structlog.get_logger("retrieval")

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """At most ``attempts`` tries; before try n+1, sleep a random part of the n-th backoff, or
    the server's Retry-After when it gave one (not over ``max_retry_after`` seconds)."""

    attempts: int = 3
    initial_backoff: float = 0.1
    max_backoff: float = 2.0
    multiplier: float = 2.0
    max_retry_after: float = 30.0

    def longest_backoff(self, retry: int) -> float:
        """The longest pause before retry ``retry`` (0 for the first) without Retry-After."""
        return min(self.max_backoff, self.initial_backoff * self.multiplier**retry)

    def backoff(self, retry: int) -> float:
        return random.uniform(0, self.longest_backoff(retry))

    def worst_case_pauses(self) -> float:
        """The longest all pauses of one call add up to when no Retry-After is given."""
        return sum(self.longest_backoff(retry) for retry in range(self.attempts - 1))

    def pause(self, failure: RetrievalError, retry: int) -> float | None:
        """How long to wait before retry ``retry``; None: the server asks for longer than
        this policy waits."""
        if isinstance(failure, RateLimitedError) and failure.retry_after is not None:
            return failure.retry_after if failure.retry_after <= self.max_retry_after else None
        return self.backoff(retry)


def retry_after_seconds(value: str | None) -> float | None:
    """A ``Retry-After`` header in seconds: delta-seconds or an HTTP date; ``None`` if neither."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def can_pass(error: RetrievalError) -> bool:
    """The failures a remote call may not meet again: 5xx, a refused or dropped connection,
    an attempt that timed out, 429 (the kinds of ``BackendUnavailableError``)."""
    return isinstance(error, BackendUnavailableError)


async def retrying(
    attempt: Callable[[float], Awaitable[T]],
    *,
    policy: RetryPolicy,
    deadline: float,
    what: str,
    room: float = 0.0,
    retryable: Callable[[RetrievalError], bool] = can_pass,
) -> T:
    """What ``attempt(seconds left before deadline)`` returns, tried as the module says.

    ``deadline`` is on the ``time.monotonic()`` clock; ``attempt`` raises ``RetrievalError``.
    """
    retry = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise BackendTimeoutError(f"{what}: the deadline passed before it could be tried")
        try:
            return await attempt(left)
        except RetrievalError as failure:
            last = retry + 1 == policy.attempts
            pause = None if last or not retryable(failure) else policy.pause(failure, retry)
            if pause is None or time.monotonic() + pause + room >= deadline:
                raise
            log.info(
                "retry", what=what, attempt=retry + 1, error=str(failure), pause_s=round(pause, 3)
            )
            await asyncio.sleep(pause)
        retry += 1
