"""Which app answers an MCP request over HTTP: the JSON one unless the request needs a stream,
tried in process through ASGI; and the HTTP server that runs them."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.types import Message
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from retrieval.mcp.response_modes import ByProgress
from retrieval.mcp.transports import quiet_server

MODERN = MODERN_PROTOCOL_VERSIONS[0]
HANDSHAKE = HANDSHAKE_PROTOCOL_VERSIONS[-1]


def named_app(name: str, lifespans: list[str]) -> Starlette:
    """An app answering ``name`` and the body it read; its lifespan noted in ``lifespans``."""

    async def answer(request: Request) -> PlainTextResponse:
        return PlainTextResponse(f"{name} {(await request.body()).decode()}")

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        lifespans.append(f"{name} started")
        yield
        lifespans.append(f"{name} stopped")

    return Starlette(routes=[Route("/mcp", answer, methods=["GET", "POST"])], lifespan=lifespan)


def routed(lifespans: list[str]) -> ByProgress:
    streamed, plain = (named_app(name, lifespans) for name in ("streamed", "plain"))
    return ByProgress(streamed=streamed, plain=plain)


def call(arguments: dict[str, object], progress: bool) -> bytes:
    meta = {"progressToken": 7} if progress else {}
    params = {"name": "search", "arguments": arguments, "_meta": meta}
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    return json.dumps(request).encode()


@pytest.mark.parametrize(
    ("method", "version", "progress", "answered_by"),
    [
        ("POST", MODERN, False, "plain"),
        ("POST", MODERN, True, "streamed"),
        ("POST", HANDSHAKE, False, "streamed"),
        ("POST", None, False, "streamed"),
        ("GET", MODERN, False, "streamed"),
    ],
)
async def test_only_a_call_without_sessions_or_progress_is_answered_as_json(
    method: str, version: str | None, progress: bool, answered_by: str
) -> None:
    body = call({"query": "frost"}, progress) if method == "POST" else b""
    headers = {"mcp-protocol-version": version} if version else {}
    transport = httpx.ASGITransport(app=routed([]))
    async with httpx.AsyncClient(transport=transport, base_url="http://mcp.test") as http:
        response = await http.request(method, "/mcp", content=body, headers=headers)
    assert response.text == f"{answered_by} {body.decode()}"


async def test_a_body_of_many_parts_reaches_the_app_whole() -> None:
    body = call({"query": "frost " * 2000}, progress=False)
    parts = [body[start : start + 1000] for start in range(0, len(body), 1000)]
    messages: list[Message] = [
        {"type": "http.request", "body": part, "more_body": n < len(parts) - 1}
        for n, part in enumerate(parts)
    ]
    sent: list[Message] = []

    async def receive() -> Message:
        return messages.pop(0)

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [(b"mcp-protocol-version", MODERN.encode())],
        "query_string": b"",
    }
    await routed([])(scope, receive, send)
    answered = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    assert answered == b"plain " + body


async def test_the_lifespan_starts_and_stops_both_apps() -> None:
    lifespans: list[str] = []
    events: list[Message] = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
    replies: list[str] = []

    async def receive() -> Message:
        return events.pop(0)

    async def send(message: Message) -> None:
        replies.append(message["type"])

    await routed(lifespans)({"type": "lifespan", "state": {}}, receive, send)
    assert replies == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    assert lifespans == ["plain started", "streamed started", "streamed stopped", "plain stopped"]


def test_the_server_parses_requests_with_httptools() -> None:
    config = quiet_server(routed([])).config
    config.load()
    assert config.http_protocol_class is HttpToolsProtocol
