"""JSON responses for the MCP calls that can take them, event streams for the others.

A request may be answered as one JSON body or as an event stream (streamable HTTP, "Sending
Messages to the Server"); only a stream carries the progress notifications of ``ask``. The
SDK picks one mode per app, and in stream mode runs every call beside a task watching for
notifications, about 0.4 ms a call. ``ByProgress`` sends a request of the per-request
protocol (no session) that asks for no progress to the app in JSON mode, and everything else
(a request with a progress token, a client of a session-based protocol version, the lifespan)
to the app in stream mode.
"""

from __future__ import annotations

from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.applications import Starlette
from starlette.types import Message, Receive, Scope, Send

VERSION_HEADER = MCP_PROTOCOL_VERSION_HEADER.encode("ascii")
PROGRESS_TOKEN = b'"progressToken"'


def per_request_protocol(scope: Scope) -> bool:
    """Whether the request names a protocol version without sessions (the SDK's own rule)."""
    version = next((v.decode("latin-1") for k, v in scope["headers"] if k == VERSION_HEADER), None)
    return version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS


async def buffered(receive: Receive, limit: int) -> tuple[bytes, Receive]:
    """The request's body (up to about ``limit`` bytes: the app refuses a longer one), and a
    ``receive`` that gives the app the same messages again, then the rest."""
    messages: list[Message] = []
    size = 0
    while size <= limit:
        message = await receive()
        messages.append(message)
        size += len(message.get("body", b""))
        if message["type"] != "http.request" or not message.get("more_body", False):
            break

    async def replayed() -> Message:
        return messages.pop(0) if messages else await receive()

    return b"".join(m.get("body", b"") for m in messages), replayed


class ByProgress:
    """ASGI: ``plain`` (JSON responses) answers a per-request POST without a progress token;
    ``streamed`` (event streams) everything else, and runs the lifespan inside ``plain``'s."""

    def __init__(self, streamed: Starlette, plain: Starlette) -> None:
        self._streamed = streamed
        self._plain = plain

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            async with self._plain.router.lifespan_context(self._plain):
                await self._streamed(scope, receive, send)
            return
        if scope["type"] != "http" or scope["method"] != "POST" or not per_request_protocol(scope):
            await self._streamed(scope, receive, send)
            return
        body, replayed = await buffered(receive, DEFAULT_MAX_REQUEST_BODY_SIZE)
        # A progress token spelt with escapes, or the words inside an argument, take the stream:
        # never wrong, only slower.
        app = self._streamed if PROGRESS_TOKEN in body else self._plain
        await app(scope, replayed, send)
