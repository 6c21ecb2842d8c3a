"""The one retry loop of remote calls: what is tried again, how often, and for how long."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval.errors import (
    BackendUnavailableError,
    InvalidRequestError,
    RateLimitedError,
    RetrievalError,
)
from retrieval.retries import RetryPolicy, retrying

FAST = RetryPolicy(attempts=4, initial_backoff=0.001, max_backoff=0.002, max_retry_after=5.0)


class Failing:
    """Fails with ``errors`` in turn, then answers ``"done"``; counts its calls."""

    def __init__(self, *errors: RetrievalError) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self, left: float) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "done"


async def run(attempt: Failing, seconds: float = 2.0) -> str:
    return await retrying(attempt, policy=FAST, deadline=time.monotonic() + seconds, what="x")


async def test_what_can_pass_is_tried_again_until_it_succeeds() -> None:
    attempt = Failing(BackendUnavailableError("503"), RateLimitedError("429", retry_after=0.01))
    assert await run(attempt) == "done"
    assert attempt.calls == 3


async def test_what_cannot_pass_is_raised_at_once() -> None:
    attempt = Failing(InvalidRequestError("bad", field="x"))
    with pytest.raises(InvalidRequestError):
        await run(attempt)
    assert attempt.calls == 1


@pytest.mark.parametrize(
    ("retry_after", "seconds"), [(3.0, 1.0), (6.0, 60.0)], ids=["past-deadline", "past-policy"]
)
async def test_a_retry_after_that_cannot_be_waited_for_is_raised_at_once(
    retry_after: float, seconds: float
) -> None:
    attempt = Failing(RateLimitedError("429", retry_after=retry_after))
    started = time.monotonic()
    with pytest.raises(RateLimitedError) as raised:
        await run(attempt, seconds)
    assert raised.value.retry_after == retry_after
    assert attempt.calls == 1
    assert time.monotonic() - started < 0.5


@given(st.integers(0, 10))
def test_the_pauses_never_exceed_their_bound(retry: int) -> None:
    policy = RetryPolicy()
    assert 0 <= policy.pause(BackendUnavailableError("503"), retry) <= policy.longest_backoff(retry)
    assert policy.pause(RateLimitedError("429", retry_after=1.5), retry) == 1.5
    assert policy.pause(RateLimitedError("429", retry_after=31.0), retry) is None


async def test_attempts_are_bounded() -> None:
    attempt = Failing(*[BackendUnavailableError("503")] * 10)
    with pytest.raises(BackendUnavailableError):
        await run(attempt)
    assert attempt.calls == FAST.attempts
