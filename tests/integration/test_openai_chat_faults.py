"""The OpenAI-compatible chat adapter over HTTP: what it sends, what it retries, how every
failure ends in one of our typed errors, within the call's time bound."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from retrieval.adapters.openai.chat_llm import OpenAiChatLlm, retry_after_seconds
from retrieval.domain.chat import ChatMessage, Completion
from retrieval.errors import (
    BackendError,
    BackendNotConfiguredError,
    BackendTimeoutError,
    BackendUnavailableError,
    InvalidRequestError,
    NotAuthorisedError,
    RateLimitedError,
    RetrievalError,
)
from retrieval_testkit.openai_standin import Fault, OpenAiStandIn

KEY = "sk-standin-secret"
REQUEST_TIMEOUT = 0.3
CALL_TIMEOUT = 3.0
ATTEMPTS = 3
SLACK = 1.0
QUESTION = [
    ChatMessage(role="system", content="Answer from the passages."),
    ChatMessage(role="user", content="[1] Blister blight spreads in wet weather.\n\nWhy?"),
]


@pytest.fixture
def standin() -> Iterator[OpenAiStandIn]:
    with OpenAiStandIn(api_key=KEY) as running:
        yield running


def chat_llm(
    standin: OpenAiStandIn,
    *,
    api_key: str | None = KEY,
    model: str | None = None,
    request_timeout_s: float = REQUEST_TIMEOUT,
    call_timeout_s: float = CALL_TIMEOUT,
    max_attempts: int = ATTEMPTS,
) -> OpenAiChatLlm:
    return OpenAiChatLlm(
        standin.base_url,
        api_key,
        model or standin.model,
        request_timeout_s=request_timeout_s,
        call_timeout_s=call_timeout_s,
        max_attempts=max_attempts,
    )


@pytest.fixture
async def llm(standin: OpenAiStandIn) -> AsyncIterator[OpenAiChatLlm]:
    llm = chat_llm(standin)
    yield llm
    await llm.close()


async def timed_failure(
    llm: OpenAiChatLlm, expected: type[RetrievalError]
) -> tuple[RetrievalError, float]:
    started = time.perf_counter()
    with pytest.raises(expected) as raised:
        await llm.complete(QUESTION)
    return raised.value, time.perf_counter() - started


async def timed_success(llm: OpenAiChatLlm) -> tuple[Completion, float]:
    started = time.perf_counter()
    completion = await llm.complete(QUESTION)
    return completion, time.perf_counter() - started


# What is sent


async def test_the_request_is_an_openai_chat_completion(
    llm: OpenAiChatLlm, standin: OpenAiStandIn
) -> None:
    completion = await llm.complete(QUESTION, max_tokens=50, temperature=0.2)
    await llm.complete(QUESTION)
    first, second = standin.requests
    assert first.path == "/v1/chat/completions"
    assert first.headers["authorization"] == f"Bearer {KEY}"
    assert first.headers["content-type"] == "application/json"
    assert first.body == {
        "model": "standin-model",
        "messages": [
            {"role": "system", "content": "Answer from the passages."},
            {"role": "user", "content": "[1] Blister blight spreads in wet weather.\n\nWhy?"},
        ],
        "temperature": 0.2,
        "max_tokens": 50,
        "stream": False,
    }
    assert "max_tokens" not in second.body
    assert completion == Completion(
        text="Answer [1].",
        model="standin-model",
        finish_reason="stop",
        prompt_tokens=12,
        completion_tokens=2,
    )


async def test_a_base_url_with_a_trailing_slash_reaches_the_same_path(
    standin: OpenAiStandIn,
) -> None:
    llm = OpenAiChatLlm(standin.base_url + "/", KEY, standin.model)
    try:
        await llm.complete(QUESTION)
    finally:
        await llm.close()
    assert [request.path for request in standin.requests] == ["/v1/chat/completions"]


async def test_without_a_key_no_authorization_is_sent() -> None:
    with OpenAiStandIn() as standin:
        llm = chat_llm(standin, api_key=None)
        try:
            await llm.complete(QUESTION)
        finally:
            await llm.close()
    assert "authorization" not in standin.requests[0].headers


# What the reply says


async def test_the_servers_model_finish_reason_and_usage_are_read(
    llm: OpenAiChatLlm, standin: OpenAiStandIn
) -> None:
    reply = {
        "model": "standin-model-2025-01",
        "choices": [
            {"message": {"role": "assistant", "content": "Cut"}, "finish_reason": "length"}
        ],
        "usage": {"prompt_tokens": 120, "completion_tokens": 8, "total_tokens": 128},
    }
    standin.inject(Fault(body=json.dumps(reply)))
    completion = await llm.complete(QUESTION)
    assert completion == Completion(
        text="Cut",
        model="standin-model-2025-01",
        finish_reason="length",
        prompt_tokens=120,
        completion_tokens=8,
    )


async def test_a_reply_without_model_or_usage_names_the_model_asked(
    llm: OpenAiChatLlm, standin: OpenAiStandIn
) -> None:
    standin.inject(Fault(body=json.dumps({"choices": [{"message": {"content": "Yes [2]."}}]})))
    completion = await llm.complete(QUESTION)
    assert completion == Completion(text="Yes [2].", model="standin-model")


@pytest.mark.parametrize(
    ("body", "content_type", "problem"),
    [
        ("<html><body>Bad Gateway</body></html>", "text/html", "not JSON (text/html)"),
        ("{}", "application/json", "choices: Field required"),
        ("[]", "application/json", "valid dictionary"),
        ('{"choices": []}', "application/json", "choices: List should have at least 1 item"),
        ('{"choices": [{}]}', "application/json", "choices.0.message: Field required"),
        (
            '{"choices": [{"message": {"role": "assistant", "content": null}}]}',
            "application/json",
            "choices.0.message.content: Input should be a valid string",
        ),
        (
            '{"choices": [{"message": {"content": 42}}]}',
            "application/json",
            "choices.0.message.content: Input should be a valid string",
        ),
        (
            '{"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": "3"}}',
            "application/json",
            "usage.prompt_tokens: Input should be a valid integer",
        ),
    ],
)
async def test_a_malformed_reply_is_a_backend_error_not_retried(
    llm: OpenAiChatLlm, standin: OpenAiStandIn, body: str, content_type: str, problem: str
) -> None:
    standin.inject(Fault(body=body, content_type=content_type), count=ATTEMPTS)
    error, _ = await timed_failure(llm, BackendError)
    assert type(error) is BackendError
    assert "malformed reply" in str(error)
    assert problem in str(error)
    assert len(standin.requests) == 1


# Refusals: never retried


async def test_a_wrong_key_is_not_authorised_and_never_shown(standin: OpenAiStandIn) -> None:
    llm = chat_llm(standin, api_key="sk-wrong-secret")
    try:
        error, _ = await timed_failure(llm, NotAuthorisedError)
    finally:
        await llm.close()
    assert "401" in str(error)
    assert "RETRIEVAL_LLM_API_KEY" in str(error)
    assert "sk-wrong-secret" not in f"{error} {llm!r} {vars(llm)}"
    assert len(standin.requests) == 1


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (400, InvalidRequestError),
        (401, NotAuthorisedError),
        (403, NotAuthorisedError),
        (404, BackendError),
        (409, BackendError),
        (422, InvalidRequestError),
    ],
)
async def test_a_refusal_is_translated_and_not_retried(
    llm: OpenAiChatLlm, standin: OpenAiStandIn, status: int, expected: type[RetrievalError]
) -> None:
    standin.inject(Fault(status=status), count=ATTEMPTS)
    error, _ = await timed_failure(llm, expected)
    assert type(error) is expected
    assert f"{status}" in str(error)
    assert len(standin.requests) == 1


async def test_an_unknown_model_says_model_or_base_url_not_found(standin: OpenAiStandIn) -> None:
    llm = chat_llm(standin, model="no-such-model")
    try:
        error, _ = await timed_failure(llm, BackendError)
    finally:
        await llm.close()
    assert type(error) is BackendError
    assert "no such model, or no API at that base URL (404)" in str(error)
    assert "'no-such-model'" in str(error)
    assert standin.base_url in str(error)
    assert "The model `no-such-model` does not exist" in str(error)
    assert len(standin.requests) == 1


# What can pass: retried, within bounds


async def test_429_waits_the_retry_after_then_succeeds(
    llm: OpenAiChatLlm, standin: OpenAiStandIn
) -> None:
    standin.inject(Fault(status=429, retry_after="1"))
    completion, elapsed = await timed_success(llm)
    assert completion.text == "Answer [1]."
    assert len(standin.requests) == 2
    assert 1.0 <= elapsed < 1.0 + SLACK


async def test_a_retry_after_past_the_call_bound_is_not_waited(
    llm: OpenAiChatLlm, standin: OpenAiStandIn
) -> None:
    standin.inject(Fault(status=429, retry_after="60"), count=ATTEMPTS)
    error, elapsed = await timed_failure(llm, RateLimitedError)
    assert isinstance(error, RateLimitedError)
    assert error.retry_after == 60.0
    assert len(standin.requests) == 1
    assert elapsed < SLACK


async def test_a_retry_after_longer_than_the_adapter_waits_fails_at_once(
    standin: OpenAiStandIn,
) -> None:
    llm = chat_llm(standin, call_timeout_s=60.0)
    standin.inject(Fault(status=429, retry_after="45"), count=ATTEMPTS)
    try:
        async with asyncio.timeout(SLACK):
            error, _ = await timed_failure(llm, RateLimitedError)
    finally:
        await llm.close()
    assert isinstance(error, RateLimitedError)
    assert error.retry_after == 45.0
    assert len(standin.requests) == 1


async def test_rate_limited_every_time_gives_up_after_the_attempts(
    llm: OpenAiChatLlm, standin: OpenAiStandIn
) -> None:
    standin.inject(Fault(status=429, retry_after="0"), count=ATTEMPTS + 2)
    error, _ = await timed_failure(llm, RateLimitedError)
    assert isinstance(error, RateLimitedError)
    assert error.retry_after == 0.0
    assert len(standin.requests) == ATTEMPTS


async def test_500_twice_then_success(llm: OpenAiChatLlm, standin: OpenAiStandIn) -> None:
    standin.inject(Fault(status=500), count=2)
    completion, _ = await timed_success(llm)
    assert completion.text == "Answer [1]."
    assert len(standin.requests) == 3


async def test_unavailable_every_time_stops_after_max_attempts(
    llm: OpenAiChatLlm, standin: OpenAiStandIn
) -> None:
    html = "<html><body><h1>502 Bad Gateway</h1></body></html>"
    standin.inject(Fault(status=502, body=html, content_type="text/html"), count=ATTEMPTS + 2)
    error, elapsed = await timed_failure(llm, BackendUnavailableError)
    assert type(error) is BackendUnavailableError
    assert "502 Bad Gateway" in str(error)
    assert len(standin.requests) == ATTEMPTS
    assert elapsed < 0.5 + 1.0 + SLACK


async def test_one_attempt_means_no_retry(standin: OpenAiStandIn) -> None:
    llm = chat_llm(standin, max_attempts=1)
    standin.inject(Fault(status=503), count=2)
    try:
        await timed_failure(llm, BackendUnavailableError)
    finally:
        await llm.close()
    assert len(standin.requests) == 1


async def test_a_dropped_connection_is_retried(llm: OpenAiChatLlm, standin: OpenAiStandIn) -> None:
    standin.inject(Fault(disconnect=True))
    completion, _ = await timed_success(llm)
    assert completion.text == "Answer [1]."
    assert len(standin.requests) == 2


async def test_a_refused_connection_is_unavailable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    llm = OpenAiChatLlm(f"http://127.0.0.1:{port}/v1", None, "m", call_timeout_s=CALL_TIMEOUT)
    try:
        error, elapsed = await timed_failure(llm, BackendUnavailableError)
    finally:
        await llm.close()
    assert type(error) is BackendUnavailableError
    assert "ConnectError" in str(error)
    assert elapsed < 0.5 + 1.0 + SLACK


async def test_a_silent_server_times_out_after_the_attempts(
    llm: OpenAiChatLlm, standin: OpenAiStandIn
) -> None:
    standin.inject(Fault(delay=10), count=ATTEMPTS)
    error, elapsed = await timed_failure(llm, BackendTimeoutError)
    assert f"no answer within {REQUEST_TIMEOUT:g} s" in str(error)
    assert len(standin.requests) == ATTEMPTS
    assert elapsed < ATTEMPTS * REQUEST_TIMEOUT + 0.5 + 1.0 + SLACK


async def test_the_whole_call_ends_within_its_bound(standin: OpenAiStandIn) -> None:
    llm = chat_llm(standin, request_timeout_s=5.0, call_timeout_s=1.0)
    standin.inject(Fault(delay=10), count=ATTEMPTS)
    try:
        error, elapsed = await timed_failure(llm, BackendTimeoutError)
    finally:
        await llm.close()
    assert "no answer within 1 s" in str(error)
    assert 1.0 <= elapsed < 1.0 + SLACK
    assert len(standin.requests) == 1


# Settings and input


@pytest.mark.parametrize(
    ("base_url", "model"),
    [(None, "m"), ("", "m"), ("http://127.0.0.1:9/v1", None), ("http://127.0.0.1:9/v1", "")],
)
async def test_without_base_url_or_model_it_is_not_configured(
    base_url: str | None, model: str | None
) -> None:
    llm = OpenAiChatLlm(base_url, None, model)
    with pytest.raises(BackendNotConfiguredError) as raised:
        await llm.complete(QUESTION)
    assert "RETRIEVAL_LLM_BASE_URL" in str(raised.value)
    assert "RETRIEVAL_LLM_MODEL" in str(raised.value)
    assert llm.model == (model or "")


@pytest.mark.parametrize("base_url", ["localhost:8000/v1", "ftp://127.0.0.1/v1", "http://"])
async def test_a_base_url_that_is_not_http_is_not_configured(base_url: str) -> None:
    llm = OpenAiChatLlm(base_url, None, "m")
    with pytest.raises(BackendNotConfiguredError, match="RETRIEVAL_LLM_BASE_URL must be an"):
        await llm.complete(QUESTION)


async def test_bad_input_is_refused_before_anything_is_sent(
    llm: OpenAiChatLlm, standin: OpenAiStandIn
) -> None:
    with pytest.raises(InvalidRequestError, match="messages"):
        await llm.complete([])
    with pytest.raises(InvalidRequestError, match="max_tokens"):
        await llm.complete(QUESTION, max_tokens=0)
    assert standin.requests == []


def test_nonsense_limits_are_refused() -> None:
    with pytest.raises(ValueError, match="max_attempts"):
        OpenAiChatLlm("http://127.0.0.1:9/v1", None, "m", max_attempts=0)
    with pytest.raises(ValueError, match="positive"):
        OpenAiChatLlm("http://127.0.0.1:9/v1", None, "m", call_timeout_s=0)


@pytest.mark.parametrize(
    ("header", "seconds"),
    [(None, None), ("2", 2.0), ("0.5", 0.5), ("-3", 0.0), ("soon", None), ("nan", None)],
)
def test_retry_after_in_seconds(header: str | None, seconds: float | None) -> None:
    assert retry_after_seconds(header) == seconds


def test_retry_after_as_an_http_date() -> None:
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=120), usegmt=True)
    earlier = format_datetime(datetime.now(UTC) - timedelta(seconds=120), usegmt=True)
    assert retry_after_seconds(later) == pytest.approx(120, abs=2)
    assert retry_after_seconds(earlier) == 0.0
