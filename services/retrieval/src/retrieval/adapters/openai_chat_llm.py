"""The Llm port on an OpenAI-compatible chat completions API (vLLM, llama.cpp's server,
Ollama's ``/v1``, OpenAI).

One call is one ``POST {base_url}/chat/completions`` (``base_url`` includes ``/v1``) with
``model``, ``messages``, ``temperature``, ``max_tokens`` when given and ``stream: false``;
the key, when there is one, goes as ``Authorization: Bearer``. Local servers need none.

Errors (``raise ... from`` the cause)::

    401 / 403                               -> NotAuthorisedError
    400 / 422                               -> InvalidRequestError
    404                                     -> BackendError: model or base URL not found
    408, httpx timeouts                     -> BackendTimeoutError        (retried)
    413                                     -> PayloadTooLargeError
    429                                     -> RateLimitedError           (retried)
    5xx, connection refused or dropped      -> BackendUnavailableError    (retried)
    any other status, a malformed reply     -> BackendError

Time bound. Each attempt waits at most ``request_timeout_s`` for each of connecting,
sending and every read (a reply that is not streamed arrives in one piece, so that is the
time the model may take to write it). What can pass (the kinds of
``BackendUnavailableError``) is tried at most ``max_attempts`` times (``retrieval.retries``),
after a pause of a random part of 0.5 s, 1 s, 2 s, ... (at most 8 s), or after the server's
``Retry-After``. The call as a whole, pauses included, ends within ``call_timeout_s`` with
``BackendTimeoutError``; a pause that would leave less than ``request_timeout_s`` before
then is not taken, nor a ``Retry-After`` over 30 s: the last failure is raised at once
instead (a ``RateLimitedError`` with the server's ``retry_after``).

One ``httpx.AsyncClient`` per running event loop keeps connections to the server open
between calls; ``close`` releases the client of the loop it is awaited on.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from retrieval.adapters.pinecone_clients import PerLoop
from retrieval.domain.chat import ChatMessage, Completion
from retrieval.errors import (
    BackendError,
    BackendNotConfiguredError,
    BackendTimeoutError,
    BackendUnavailableError,
    InvalidRequestError,
    NotAuthorisedError,
    PayloadTooLargeError,
    RateLimitedError,
    RetrievalError,
)
from retrieval.retries import RetryPolicy, retry_after_seconds, retrying

MAX_DETAIL_CHARS = 300


class OpenAiChatLlm:
    """A chat model served at ``base_url``; ``model`` is ``""`` until configured."""

    def __init__(
        self,
        base_url: str | None,
        api_key: str | None,
        model: str | None,
        *,
        request_timeout_s: float = 30.0,
        call_timeout_s: float = 90.0,
        max_attempts: int = 3,
    ) -> None:
        if request_timeout_s <= 0 or call_timeout_s <= 0:
            raise ValueError("request_timeout_s and call_timeout_s must be positive")
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self._base_url = base_url.rstrip("/") if base_url else None
        self._model = model or None
        self._request_timeout_s = request_timeout_s
        self._call_timeout_s = call_timeout_s
        self._retries = RetryPolicy(
            attempts=max_attempts, initial_backoff=0.5, max_backoff=8.0, max_retry_after=30.0
        )
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._clients = PerLoop(
            lambda: httpx.AsyncClient(headers=headers, timeout=request_timeout_s),
            lambda client: client.aclose(),
        )

    @property
    def model(self) -> str:
        return self._model or ""

    async def close(self) -> None:
        """Release the connections of the running loop's client."""
        await self._clients.close()

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> Completion:
        if not self._base_url or not self._model:
            raise BackendNotConfiguredError(
                "the chat model needs RETRIEVAL_LLM_BASE_URL and RETRIEVAL_LLM_MODEL"
            )
        if not messages:
            raise InvalidRequestError("at least one message is needed", field="messages")
        if max_tokens is not None and max_tokens < 1:
            raise InvalidRequestError("must be at least 1", field="max_tokens")
        body: dict[str, Any] = {
            "model": self._model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "temperature": temperature,
            "stream": False,
        }
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        what = f"chat model {self._model!r} at {self._base_url}"
        url = chat_completions_url(self._base_url)
        try:
            async with asyncio.timeout(self._call_timeout_s):
                payload = await self._post(url, body, what)
        except TimeoutError as error:
            raise BackendTimeoutError(
                f"{what}: no answer within {self._call_timeout_s:g} s"
            ) from error
        return completion_from(payload, what, self._model)

    async def _post(self, url: str, body: dict[str, Any], what: str) -> Any:
        """The decoded JSON of the first successful attempt; the last failure otherwise."""
        client = self._clients.get()

        async def attempt(left: float) -> Any:
            try:
                response = await client.post(url, json=body)
            except httpx.TimeoutException as error:
                raise BackendTimeoutError(
                    f"{what}: no answer within {self._request_timeout_s:g} s"
                ) from error
            except httpx.TransportError as error:
                raise BackendUnavailableError(f"{what}: {type(error).__name__}: {error}") from error
            if response.is_success:
                return decoded(response, what)
            raise error_for_status(response, what)

        return await retrying(
            attempt,
            policy=self._retries,
            deadline=time.monotonic() + self._call_timeout_s,
            what=what,
            room=self._request_timeout_s,
        )


def chat_completions_url(base_url: str) -> str:
    """Where to post; ``BackendNotConfiguredError`` unless ``base_url`` is an http(s) URL."""
    try:
        parsed = httpx.URL(base_url)
    except httpx.InvalidURL:
        parsed = None
    if parsed is None or parsed.scheme not in {"http", "https"} or not parsed.host:
        raise BackendNotConfiguredError(
            f"RETRIEVAL_LLM_BASE_URL must be an http(s) URL such as http://localhost:8000/v1, "
            f"not {base_url!r}"
        )
    return f"{base_url}/chat/completions"


def error_for_status(response: httpx.Response, what: str) -> RetrievalError:
    """Our error for a reply that is not a success."""
    status = response.status_code
    detail = server_detail(response)
    message = f"{what} answered {status}: {detail}"
    if status in {401, 403}:
        return NotAuthorisedError(f"{message} (check RETRIEVAL_LLM_API_KEY)")
    if status == 404:
        return BackendError(f"{what}: no such model, or no API at that base URL (404): {detail}")
    if status in {400, 422}:
        return InvalidRequestError(message)
    if status == 408:
        return BackendTimeoutError(message)
    if status == 413:
        return PayloadTooLargeError(message)
    if status == 429:
        retry_after = retry_after_seconds(response.headers.get("Retry-After"))
        return RateLimitedError(message, retry_after=retry_after)
    if status >= 500:
        return BackendUnavailableError(message)
    return BackendError(message)


def server_detail(response: httpx.Response) -> str:
    """What the server said went wrong: its error message, else the start of its body."""
    try:
        payload = response.json()
    except ValueError:
        payload = None
    detail: Any = None
    if isinstance(payload, dict):
        detail = payload.get("error", payload.get("detail"))
        if isinstance(detail, dict):
            detail = detail.get("message")
    text = " ".join(str(detail or response.text).split())
    return without_key(text, response)[:MAX_DETAIL_CHARS] or response.reason_phrase


def without_key(text: str, response: httpx.Response) -> str:
    """``text`` with the API key the request carried masked: a server may quote it back."""
    key = response.request.headers.get("Authorization", "").partition(" ")[2]
    return text.replace(key, "[redacted]") if key else text


def decoded(response: httpx.Response, what: str) -> Any:
    try:
        return response.json()
    except ValueError as error:
        content_type = response.headers.get("Content-Type", "no content type")
        raise BackendError(
            f"{what}: malformed reply: not JSON ({content_type}): {server_detail(response)}"
        ) from error


class _Wire(BaseModel):
    model_config = ConfigDict(strict=True, frozen=True)


class _Message(_Wire):
    content: str


class _Choice(_Wire):
    message: _Message
    finish_reason: str | None = None


class _Usage(_Wire):
    prompt_tokens: int | None = Field(default=None, ge=0)
    completion_tokens: int | None = Field(default=None, ge=0)


class ChatCompletionReply(_Wire):
    """The parts of a chat completion read here; the rest is ignored."""

    model: str | None = None
    choices: list[_Choice] = Field(min_length=1)
    usage: _Usage | None = None


def completion_from(payload: Any, what: str, model: str) -> Completion:
    """The first choice of a decoded reply; ``model`` when the server names none."""
    try:
        reply = ChatCompletionReply.model_validate(payload)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(map(str, problem['loc'])) or 'reply'}: {problem['msg']}"
            for problem in error.errors()[:3]
        )
        raise BackendError(f"{what}: malformed reply: {problems}") from error
    usage = reply.usage or _Usage()
    return Completion(
        text=reply.choices[0].message.content,
        model=reply.model or model,
        finish_reason=reply.choices[0].finish_reason,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
    )
