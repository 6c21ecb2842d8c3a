"""A loopback stand-in for an OpenAI-compatible chat completions server.

A real HTTP server on a loopback address (port 0) in a background thread. It answers
``POST /v1/chat/completions`` (and ``/chat/completions``) as OpenAI does: with
``api_key`` set it wants ``Authorization: Bearer <key>`` (else 401), it refuses another
model than its own (404) and malformed messages, ``max_tokens`` or ``temperature`` (400),
and replies with ``reply(request)`` (a :data:`~retrieval_testkit.scripted_llm.Reply`,
``"Answer [1]."`` by default), finish reason ``stop`` and word counts as usage. Asked to
``stream``, it sends the reply a word at a time as server-sent events of
``chat.completion.chunk`` (a usage chunk last when ``stream_options.include_usage``), then
``data: [DONE]``, and records how each stream ended (:meth:`OpenAiStandIn.ended_streams`):
the client hanging up before the end is noticed at once while a stream is held. Point a client
at :attr:`OpenAiStandIn.base_url`. Every request is logged as it arrives;
:meth:`OpenAiStandIn.inject` makes the next ones fail, stall, hang up, answer garbage, or
(streams) hang up or hold after some pieces.
"""

from __future__ import annotations

import json
import select
import socket
import sys
import threading
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pydantic import TypeAdapter, ValidationError

from retrieval.domain.chat import ChatMessage
from retrieval_testkit.scripted_llm import ChatRequest, Reply, constant_reply, pieces, word_count

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
    when ``None``), or, with neither, answer as usual. A stream answered as usual hangs up
    after ``cut_after`` pieces of text, or holds after ``hold_after`` pieces until
    :meth:`OpenAiStandIn.release` (or the client hangs up)."""

    status: int | None = None
    retry_after: str | None = None
    delay: float = 0.0
    body: str | None = None
    content_type: str = "application/json"
    disconnect: bool = False
    cut_after: int | None = None
    hold_after: int | None = None


@dataclass(frozen=True)
class StreamedReply:
    """How a streamed reply ended: ``sent`` of its ``total`` pieces of text went out;
    ``hung_up`` when the client closed the connection before the end."""

    sent: int
    total: int
    hung_up: bool


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
        self._streams: list[StreamedReply] = []
        self._lock = threading.Lock()
        self._streamed = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._released = threading.Event()
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
        self._released.set()
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

    def ended_streams(self, count: int = 1, timeout: float = 5.0) -> list[StreamedReply]:
        """Wait (blocking) until ``count`` streamed replies have ended; every one that has,
        in the order they ended."""
        with self._streamed:
            if not self._streamed.wait_for(lambda: len(self._streams) >= count, timeout):
                raise AssertionError(f"{len(self._streams)} of {count} streams ended")
            return list(self._streams)

    def release(self) -> None:
        """Let every stream held by ``Fault(hold_after=...)`` go on, now and from now on."""
        self._released.set()

    def stream_ended(self, reply: StreamedReply) -> None:
        with self._streamed:
            self._streams.append(reply)
            self._streamed.notify_all()

    def held(self, connection: socket.socket) -> bool:
        """Wait until released or stopped; True if the client hung up meanwhile."""
        while not self._released.is_set():
            readable, _, _ = select.select([connection], [], [], 0.01)
            if readable and not connection.recv(1, socket.MSG_PEEK):
                return True
        return False

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

    def answer(self, request: ReceivedRequest) -> tuple[ChatRequest, str]:
        """What ``request`` asks and the reply's text; ``RefusedError`` as OpenAI would
        refuse it."""
        if request.path not in PATHS:
            raise RefusedError(404, f"no route POST {request.path}")
        if self.api_key and request.headers.get("authorization") != f"Bearer {self.api_key}":
            raise RefusedError(401, "Incorrect API key provided")
        chat = self._chat_request(request.body)
        return chat, self.reply(chat)

    def completion(self, chat: ChatRequest, text: str) -> dict[str, Any]:
        """The chat completion replying ``text`` to ``chat``."""
        return {
            **self._reply_fields("chat.completion"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": usage(chat, text),
        }

    def chunk(self, delta: dict[str, str], finish_reason: str | None = None) -> dict[str, Any]:
        """A chunk of a streamed completion."""
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
        return {**self._reply_fields("chat.completion.chunk"), "choices": [choice]}

    def usage_chunk(self, chat: ChatRequest, text: str) -> dict[str, Any]:
        """The last chunk of a stream asked to include usage: no choice, the usage."""
        return {
            **self._reply_fields("chat.completion.chunk"),
            "choices": [],
            "usage": usage(chat, text),
        }

    def _reply_fields(self, kind: str) -> dict[str, Any]:
        return {"id": f"chatcmpl-standin-{len(self.requests)}", "object": kind, "model": self.model}

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
            chat, text = standin.answer(request)
        except RefusedError as refusal:
            message = error_json(refusal.status, refusal.message)
            self._reply(refusal.status, message, "application/json", {})
            return
        if body.get("stream") is True:
            self._stream(chat, text, fault or Fault(), with_usage=included_usage(body))
        else:
            self._reply(200, json.dumps(standin.completion(chat, text)), "application/json", {})

    def _stream(self, chat: ChatRequest, text: str, fault: Fault, *, with_usage: bool) -> None:
        """``text`` a piece at a time, chunked, as ``fault`` lets it; how it ended recorded."""
        assert isinstance(self.server, _Server)
        standin = self.server.standin
        parts = pieces(text)
        sent, hung_up = 0, False
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self._send(event(standin.chunk({"role": "assistant", "content": ""})))
            for part in parts:
                if sent == fault.cut_after:
                    self.close_connection = True
                    return
                if sent == fault.hold_after and standin.held(self.connection):
                    hung_up = self.close_connection = True
                    return
                self._send(event(standin.chunk({"content": part})))
                sent += 1
            self._send(event(standin.chunk({}, "stop")))
            if with_usage:
                self._send(event(standin.usage_chunk(chat, text)))
            self._send(b"data: [DONE]\n\n")
            self._send(b"")
        except (BrokenPipeError, ConnectionResetError):
            hung_up = self.close_connection = True
        finally:
            standin.stream_ended(StreamedReply(sent=sent, total=len(parts), hung_up=hung_up))

    def _send(self, data: bytes) -> None:
        """One chunk of a chunked body; empty: the last."""
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

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


def included_usage(body: dict[str, Any]) -> bool:
    """Whether a streamed reply ends with a usage chunk (``stream_options.include_usage``)."""
    options = body.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


def usage(chat: ChatRequest, text: str) -> dict[str, int]:
    """Word counts, as the fakes count tokens."""
    prompt_tokens = word_count([message.content for message in chat.messages])
    completion_tokens = word_count([text])
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def event(payload: Any) -> bytes:
    """One server-sent event carrying ``payload`` as JSON."""
    return f"data: {json.dumps(payload)}\n\n".encode()


def error_json(status: int, message: str) -> str:
    """An error body in OpenAI's shape."""
    kind = "invalid_request_error" if status < 500 else "server_error"
    return json.dumps({"error": {"message": message, "type": kind, "param": None, "code": None}})


__all__ = ["Fault", "OpenAiStandIn", "ReceivedRequest", "StreamedReply"]
