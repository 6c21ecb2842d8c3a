"""A loopback stand-in for an OpenAI-compatible chat completions server.

A real HTTP server on a loopback address (port 0) in a background thread. It answers
``POST /v1/chat/completions`` (and ``/chat/completions``) as OpenAI does: with
``api_key`` set it wants ``Authorization: Bearer <key>`` (else 401), it refuses another
model than its own (404) and malformed messages, ``max_tokens`` or ``temperature`` (400),
and replies with ``reply(request)`` (a :data:`~retrieval_testkit.scripted_llm.Reply`,
``"Answer [1]."`` by default), finish reason ``stop`` and word counts as usage. Point a
client at :attr:`OpenAiStandIn.base_url`. Every request is logged as it arrives;
:meth:`OpenAiStandIn.inject` makes the next ones fail, stall, hang up or answer garbage.
"""

from __future__ import annotations

import json
import sys
import threading
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pydantic import TypeAdapter, ValidationError

from retrieval.domain.chat import ChatMessage
from retrieval_testkit.scripted_llm import ChatRequest, Reply, constant_reply, word_count

PATHS = frozenset({"/v1/chat/completions", "/chat/completions"})
MESSAGES = TypeAdapter(list[ChatMessage])


@dataclass(frozen=True)
class ReceivedRequest:
    """One request as it arrived: header names in lower case, the body decoded if JSON."""

    path: str
    headers: dict[str, str]
    body: Any


@dataclass(frozen=True)
class Fault:
    """Instead of answering: wait ``delay`` seconds, then hang up (``disconnect``), or send
    ``status`` (200 when only ``body`` is given) with ``body`` as it is (an OpenAI error
    when ``None``), or, with neither, answer as usual."""

    status: int | None = None
    retry_after: str | None = None
    delay: float = 0.0
    body: str | None = None
    content_type: str = "application/json"
    disconnect: bool = False


class RefusedError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class OpenAiStandIn:
    """Serves ``model`` with scripted replies; ``reply`` may be replaced between calls."""

    def __init__(
        self,
        *,
        model: str = "standin-model",
        api_key: str | None = None,
        reply: Reply = constant_reply,
        host: str = "127.0.0.1",
    ) -> None:
        self.model = model
        self.api_key = api_key
        self.reply = reply
        self.host = host
        self._log: list[ReceivedRequest] = []
        self._faults: deque[Fault] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the stand-in first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> OpenAiStandIn:
        self._server = _Server((self.host, 0), self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> OpenAiStandIn:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def requests(self) -> list[ReceivedRequest]:
        with self._lock:
            return list(self._log)

    def inject(self, fault: Fault, *, count: int = 1) -> None:
        """Apply ``fault`` to each of the next ``count`` requests."""
        with self._lock:
            self._faults.extend([fault] * count)

    def receive(self, request: ReceivedRequest) -> Fault | None:
        """Log ``request``; the fault it meets, if any."""
        with self._lock:
            self._log.append(request)
            return self._faults.popleft() if self._faults else None

    def wait(self, seconds: float) -> None:
        self._stopping.wait(seconds)

    def answer(self, request: ReceivedRequest) -> dict[str, Any]:
        """The chat completion for ``request``; ``RefusedError`` as OpenAI would refuse it."""
        if request.path not in PATHS:
            raise RefusedError(404, f"no route POST {request.path}")
        if self.api_key and request.headers.get("authorization") != f"Bearer {self.api_key}":
            raise RefusedError(401, "Incorrect API key provided")
        chat = self._chat_request(request.body)
        text = self.reply(chat)
        prompt_tokens = word_count([message.content for message in chat.messages])
        return {
            "id": f"chatcmpl-standin-{len(self.requests)}",
            "object": "chat.completion",
            "model": self.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": word_count([text]),
                "total_tokens": prompt_tokens + word_count([text]),
            },
        }

    def _chat_request(self, body: Any) -> ChatRequest:
        if not isinstance(body, dict):
            raise RefusedError(400, "the body must be a JSON object")
        if body.get("model") != self.model:
            raise RefusedError(404, f"The model `{body.get('model')}` does not exist")
        try:
            messages = MESSAGES.validate_python(body.get("messages"))
        except ValidationError as error:
            raise RefusedError(400, f"invalid messages: {error}") from error
        if not messages:
            raise RefusedError(400, "messages must not be empty")
        max_tokens = body.get("max_tokens")
        if max_tokens is not None and (type(max_tokens) is not int or max_tokens < 1):
            raise RefusedError(400, "max_tokens must be a positive integer")
        temperature = body.get("temperature", 1.0)
        if type(temperature) not in {int, float} or not 0 <= temperature <= 2:
            raise RefusedError(400, "temperature must be a number between 0 and 2")
        return ChatRequest(tuple(messages), max_tokens, float(temperature))


class _Server(ThreadingHTTPServer):
    def __init__(self, address: tuple[str, int], standin: OpenAiStandIn) -> None:
        super().__init__(address, _Handler)
        self.standin = standin

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (it timed out, say) is expected; anything else is reported."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def do_POST(self) -> None:
        assert isinstance(self.server, _Server)
        standin = self.server.standin
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        headers = {name.lower(): value for name, value in self.headers.items()}
        request = ReceivedRequest(path=self.path, headers=headers, body=body)
        fault = standin.receive(request)
        if fault is not None:
            standin.wait(fault.delay)
            if fault.disconnect:
                self.close_connection = True
                return
            if fault.status is not None or fault.body is not None:
                status = fault.status or 200
                text = fault.body if fault.body is not None else error_json(status, "injected")
                retry_after = {"Retry-After": fault.retry_after} if fault.retry_after else {}
                self._reply(status, text, fault.content_type, retry_after)
                return
        try:
            status, text = 200, json.dumps(standin.answer(request))
        except RefusedError as refusal:
            status, text = refusal.status, error_json(refusal.status, refusal.message)
        self._reply(status, text, "application/json", {})

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the request log is the record."""

    def _reply(self, status: int, text: str, content_type: str, headers: dict[str, str]) -> None:
        encoded = text.encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(encoded)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(encoded)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


def error_json(status: int, message: str) -> str:
    """An error body in OpenAI's shape."""
    kind = "invalid_request_error" if status < 500 else "server_error"
    return json.dumps({"error": {"message": message, "type": kind, "param": None, "code": None}})


__all__ = ["Fault", "OpenAiStandIn", "ReceivedRequest"]
