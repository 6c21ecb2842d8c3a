"""``Mcp-Param-*`` headers over HTTP: the SDK compares them with the arguments of a tool that
declares them, and skips the comparison (and its walks of the input schema) for the others."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import httpx
from mcp.server.mcpserver.tools import Tool
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import Field

from retrieval.mcp.server import RetrievalServer, declares_headers

MODERN = MODERN_PROTOCOL_VERSIONS[0]


Region = Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]
"""An argument a call over HTTP repeats as the ``Mcp-Param-Region`` header."""


async def forecast(region: Region) -> str:
    return f"frost in {region}"


async def harvest(region: str) -> str:
    return f"plucking in {region}"


def server() -> RetrievalServer:
    return RetrievalServer("test", tools=[Tool.from_function(f) for f in (forecast, harvest)])


@asynccontextmanager
async def served() -> AsyncIterator[httpx.AsyncClient]:
    """The server's JSON app over ASGI, its lifespan running in this task."""
    app = server().streamable_http_app(json_response=True)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as c:
            yield c


async def called(http: httpx.AsyncClient, tool: str, region: str, header: str | None) -> Any:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    params = {"name": tool, "arguments": {"region": region}, "_meta": meta}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": tool,
    }
    if header is not None:
        headers["mcp-param-region"] = header
    response = await http.post("/mcp", content=json.dumps(body), headers=headers)
    return response.status_code, response.json()


async def test_a_header_that_contradicts_a_declared_argument_is_refused() -> None:
    async with served() as http:
        refused = await called(http, "forecast", "assam", "darjeeling")
        status, answer = await called(http, "forecast", "assam", "assam")
    assert refused[0] == 400
    assert "Mcp-Param-Region" in refused[1]["error"]["message"]
    assert (status, answer["result"]["content"][0]["text"]) == (200, "frost in assam")


async def test_a_tool_declaring_no_header_is_called_whatever_the_headers() -> None:
    async with served() as http:
        status, answer = await called(http, "harvest", "assam", "darjeeling")
    assert (status, answer["result"]["content"][0]["text"]) == (200, "plucking in assam")


def test_only_a_tool_declaring_a_header_hands_its_schema_to_the_sdk() -> None:
    serving = server()
    declared = Tool.from_function(forecast).parameters
    assert declares_headers(declared)
    assert serving._tool_input_schema("forecast") == declared
    assert serving._tool_input_schema("harvest") is None
    assert serving._tool_input_schema("missing") is None
