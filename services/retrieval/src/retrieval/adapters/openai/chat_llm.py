"""The Llm port on an OpenAI-compatible chat completions API (vLLM, llama.cpp's server,
Ollama's ``/v1``, OpenAI).

One call is one ``POST {base_url}/chat/completions`` (``base_url`` includes ``/v1``) with
``model``, ``messages``, ``temperature``, ``max_tokens`` when given and ``stream: false``;
the key, when there is one, goes as ``Authorization: Bearer``. Local servers need none.

A stream (``stream``) is the same call with ``stream: true`` and
``stream_options: {"include_usage": true}``: the server answers with server-sent events, one
``chat.completion.chunk`` each, then ``data: [DONE]``. Each piece of text is given as it
arrives; the ``Completion`` they add up to (the server's model, finish reason and usage)
comes last. A stream the server ends without ``[DONE]`` is whole if a chunk said why the
model stopped, else cut short (``BackendUnavailableError``); a reply that is not an event
stream, a chunk that is not one, and an ``error`` event are a ``BackendError``.

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
time the model may take to write it; a streamed one, the time before its first chunk and
between two). What can pass (the kinds of ``BackendUnavailableError``) is tried at most
``max_attempts`` times (``retrieval.retries``), after a pause of a random part of 0.5 s, 1 s,
2 s, ... (at most 8 s), or after the server's ``Retry-After``; a stream only until its first
piece of text, so no piece is ever given twice. The call as a whole, pauses and a stream's
reading included, ends within ``call_timeout_s`` with ``BackendTimeoutError``; a pause that
would leave less than ``request_timeout_s`` before then is not taken, nor a ``Retry-After``
over 30 s: the last failure is raised at once instead (a ``RateLimitedError`` with the
server's ``retry_after``).

A stream's reader that stops (closing the generator, or cancelling the task iterating it)
closes the response, and with it the connection: the server stops writing.

One ``httpx.AsyncClient`` per running event loop keeps connections to the server open
between calls; ``close`` releases the client of the loop it is awaited on.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import aclosing
from typing import Any, TypeVar

import httpx

from retrieval.adapters.openai.chat_wire import (
    ChatCompletionChunk,
    completion_from,
    parsed_reply,
    streamed_completion,
)
from retrieval.adapters.openai.server_sent_events import event_data
from retrieval.adapters.per_loop import PerLoop
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
DONE = "[DONE]"
EVENT_STREAM = "text/event-stream"

T = TypeVar("T")
Chunks = AsyncGenerator[ChatCompletionChunk, None]


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
        url, body, what = self._request(messages, max_tokens, temperature, stream=False)
        deadline = time.monotonic() + self._call_timeout_s
        payload = await self._within(deadline, what, self._post(url, body, what, deadline))
        return completion_from(payload, what, self.model)

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> AsyncGenerator[str | Completion, None]:
        url, body, what = self._request(messages, max_tokens, temperature, stream=True)
        deadline = time.monotonic() + self._call_timeout_s
        chunks, received = await self._within(
            deadline, what, self._first_text(url, body, what, deadline)
        )
        async with aclosing(chunks):
            for chunk in received:
                if chunk.text:
                    yield chunk.text
            while (chunk := await self._within(deadline, what, anext(chunks, None))) is not None:
                received.append(chunk)
                if chunk.text:
                    yield chunk.text
        yield streamed_completion(received, self.model)

    def _request(
        self,
        messages: Sequence[ChatMessage],
        max_tokens: int | None,
        temperature: float,
        *,
        stream: bool,
    ) -> tuple[str, dict[str, Any], str]:
        """Where to post, the body, and how errors name the model; what cannot be sent is
        refused here."""
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
            "stream": stream,
        }
        if stream:
            body["stream_options"] = {"include_usage": True}
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        what = f"chat model {self._model!r} at {self._base_url}"
        return chat_completions_url(self._base_url), body, what

    async def _within(self, deadline: float, what: str, step: Awaitable[T]) -> T:
        """``step``, or ``BackendTimeoutError`` once the call's ``deadline`` passes. A
        stream bounds each of its steps so, never a ``yield``: its reader's time between
        pieces belongs to the reader's task."""
        try:
            async with asyncio.timeout(deadline - time.monotonic()):
                return await step
        except TimeoutError as error:
            raise BackendTimeoutError(
                f"{what}: no answer within {self._call_timeout_s:g} s"
            ) from error

    async def _retried(
        self, attempt: Callable[[float], Awaitable[T]], deadline: float, what: str
    ) -> T:
        """What ``attempt`` returns, what can pass tried again as the module says."""
        return await retrying(
            attempt,
            policy=self._retries,
            deadline=deadline,
            what=what,
            room=self._request_timeout_s,
        )

    async def _post(self, url: str, body: dict[str, Any], what: str, deadline: float) -> Any:
        """The decoded JSON of the first successful attempt; the last failure otherwise."""
        client = self._clients.get()

        async def attempt(left: float) -> Any:
            try:
                response = await client.post(url, json=body)
            except httpx.TransportError as error:
                raise transport_error(error, what, self._request_timeout_s) from error
            if response.is_success:
                return decoded(response, what)
            raise error_for_status(response, what)

        return await self._retried(attempt, deadline, what)

    async def _first_text(
        self, url: str, body: dict[str, Any], what: str, deadline: float
    ) -> tuple[Chunks, list[ChatCompletionChunk]]:
        """The stream of the first attempt whose reply gets as far as a piece of text (or
        its end), open, and the chunks read from it; what can pass is tried again until
        then."""
        client = self._clients.get()

        async def attempt(left: float) -> tuple[Chunks, list[ChatCompletionChunk]]:
            chunks = self._chunks(client, url, body, what)
            received: list[ChatCompletionChunk] = []
            async for chunk in chunks:
                received.append(chunk)
                if chunk.text:
                    break
            return chunks, received

        return await self._retried(attempt, deadline, what)

    async def _chunks(
        self, client: httpx.AsyncClient, url: str, body: dict[str, Any], what: str
    ) -> Chunks:
        """The chunks of one streamed reply, up to ``[DONE]``; the response is closed when
        the generator is."""
        try:
            async with client.stream("POST", url, json=body) as response:
                if not response.is_success:
                    await response.aread()
                    raise error_for_status(response, what)
                content_type = response.headers.get("Content-Type", "no content type")
                if not content_type.startswith(EVENT_STREAM):
                    await response.aread()
                    raise BackendError(
                        f"{what}: malformed reply: not an event stream ({content_type}): "
                        f"{server_detail(response)}"
                    )
                finished = False
                async for data in event_data(response.aiter_lines()):
                    if data == DONE:
                        return
                    chunk = chunk_from(data, response, what)
                    finished = finished or chunk.finish_reason is not None
                    yield chunk
                if not finished:
                    raise BackendUnavailableError(
                        f"{what}: the stream ended before the model finished"
                    )
        except httpx.TransportError as error:
            raise transport_error(error, what, self._request_timeout_s) from error


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


def transport_error(error: httpx.TransportError, what: str, timeout_s: float) -> RetrievalError:
    """Our error for a request that got no reply, or a reply cut short."""
    if isinstance(error, httpx.TimeoutException):
        return BackendTimeoutError(f"{what}: no answer within {timeout_s:g} s")
    return BackendUnavailableError(f"{what}: {type(error).__name__}: {error}")


def server_detail(response: httpx.Response) -> str:
    """What the server said went wrong: its error message, else the start of its body."""
    try:
        payload = response.json()
    except ValueError:
        payload = None
    return quoted(error_message(payload) or response.text, response) or response.reason_phrase


def error_message(payload: Any) -> Any:
    """The message of an error in OpenAI's shape (``{"error": {"message": ...}}``), or of a
    ``detail``; None if ``payload`` is neither."""
    if not isinstance(payload, dict):
        return None
    detail = payload.get("error", payload.get("detail"))
    return detail.get("message") if isinstance(detail, dict) else detail


def quoted(detail: Any, response: httpx.Response) -> str:
    """``detail`` on one line, cut, without the key the request carried."""
    return without_key(" ".join(str(detail).split()), response)[:MAX_DETAIL_CHARS]


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


def chunk_from(data: str, response: httpx.Response, what: str) -> ChatCompletionChunk:
    """The chunk an event of ``response`` carries; ``BackendError`` for one that is not a
    chunk, or says the model failed."""
    try:
        payload = json.loads(data)
    except ValueError as error:
        raise BackendError(
            f"{what}: malformed reply: not JSON: {quoted(data, response)}"
        ) from error
    if isinstance(payload, dict) and "error" in payload:
        failure = quoted(error_message(payload), response)
        raise BackendError(f"{what}: failed while answering: {failure}")
    return parsed_reply(ChatCompletionChunk, payload, what)
