"""MCP over streamable HTTP through the official client: bearer tokens of the tenants file
with the gRPC server's namespace scopes, write tools for write scopes only, progress while
the model writes, and a scripted model that answers from what ``search`` found."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import Tool

from retrieval.domain.models import RagDocument
from retrieval.domain.tenants import Tenants, grants_from_json, token_digest
from retrieval.lifecycle import running
from retrieval.mcp.tools import WRITE_TOOLS
from retrieval.mcp.transports import http_served
from retrieval.settings import Settings
from retrieval_testkit.container import in_memory_container
from retrieval_testkit.scripted_llm import ScriptedLlm

TOKENS = {
    "reader-a": ("reader-a-secret", ["team-a-*"], ["read"]),
    "writer-a": ("writer-a-secret", ["team-a-*"], ["read", "write"]),
}
FROST = RagDocument(
    document_id="frost",
    title="Frost",
    domain="weather_patterns",
    content="Ground frost scorches the plucking table of tea bushes on still winter nights.",
)


def tenants() -> Tenants:
    entries = [
        {"name": name, "sha256": token_digest(secret), "namespaces": patterns, "scopes": scopes}
        for name, (secret, patterns, scopes) in TOKENS.items()
    ]
    return Tenants(grants_from_json(json.dumps(entries), "tokens.json"), "tokens.json")


@pytest.fixture
async def url(tmp_path: Path) -> AsyncIterator[str]:
    settings = Settings(data_dir=tmp_path, result_cache_entries=0)
    async with running(settings, in_memory_container(settings, llm=ScriptedLlm())) as app:
        for namespace in ("team-a-docs", "team-b-docs"):
            await app.ingestion.ingest([FROST], namespace)
        async with http_served(app, tenants(), "127.0.0.1", 0) as port:
            yield f"http://127.0.0.1:{port}/mcp"


@asynccontextmanager
async def session(url: str, token_name: str) -> AsyncIterator[Client]:
    secret = TOKENS[token_name][0]
    headers = {"Authorization": f"Bearer {secret}"}
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


@pytest.mark.parametrize("authorization", [None, "Bearer not-a-known-token", "Basic abc"])
async def test_a_request_without_a_known_bearer_token_is_refused(
    url: str, authorization: str | None
) -> None:
    headers = {"Accept": "application/json, text/event-stream"}
    if authorization is not None:
        headers["Authorization"] = authorization
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    async with httpx.AsyncClient() as http:
        response = await http.post(url, json=body, headers=headers)
    assert response.status_code == 401


async def test_the_write_tools_are_offered_to_a_token_with_write_scope_only(url: str) -> None:
    async with session(url, "reader-a") as reader, session(url, "writer-a") as writer:
        read_only = {tool.name for tool in (await reader.list_tools()).tools}
        writing = {tool.name for tool in (await writer.list_tools()).tools}
    assert read_only == {"search", "ask", "list_documents", "read_document"}
    assert writing == read_only | WRITE_TOOLS


async def test_a_read_only_token_calling_a_write_tool_gets_a_tool_error(url: str) -> None:
    async with session(url, "reader-a") as reader:
        result = await reader.call_tool(
            "delete_documents", {"document_ids": ["frost"], "namespace": "team-a-docs"}
        )
        still = await reader.call_tool(
            "read_document", {"document_id": "frost", "namespace": "team-a-docs"}
        )
    assert result.is_error
    assert "does not grant scope 'write'" in result.content[0].text
    assert not still.is_error


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("search", {"query": "frost", "namespace": "team-b-docs"}),
        ("list_documents", {"namespace": "team-b-docs"}),
        ("read_document", {"document_id": "frost", "namespace": "team-b-docs"}),
        ("ask", {"question": "frost?", "namespace": "team-b-docs"}),
    ],
)
async def test_a_token_of_one_tenant_reaches_nothing_of_another(
    url: str, tool: str, arguments: dict[str, object]
) -> None:
    async with session(url, "writer-a") as writer:
        result = await writer.call_tool(tool, arguments)
    assert result.is_error
    assert "does not grant namespace 'team-b-docs'" in result.content[0].text


async def test_every_tool_answers_a_token_within_its_namespaces(url: str) -> None:
    namespace = {"namespace": "team-a-docs"}
    note = {"text": "Prune tea bushes after the monsoon.", "title": "Pruning", "domain": "general"}
    pieces: list[str | None] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        pieces.append(message)

    async with session(url, "writer-a") as writer:
        added = await writer.call_tool("add_documents", {"documents": [note], **namespace})
        found = await writer.call_tool("search", {"query": "monsoon pruning", **namespace})
        listed = await writer.call_tool("list_documents", namespace)
        read = await writer.call_tool("read_document", {"document_id": "Pruning", **namespace})
        asked = await writer.call_tool(
            "ask", {"question": "When to prune?", **namespace}, progress_callback=progress
        )
        deleted = await writer.call_tool(
            "delete_documents", {"document_ids": ["Pruning"], **namespace}
        )
    results = [added, found, listed, read, asked, deleted]
    assert not any(result.is_error for result in results)
    assert found.structured_content["matches"][0]["title"] == "Pruning"
    assert listed.structured_content["total"] == 2
    assert "monsoon" in read.content[0].text
    assert "".join(p or "" for p in pieces) == asked.structured_content["text"]
    assert deleted.structured_content["deleted"] == ["Pruning"]


def chosen_tool(tools: list[Tool], need: str) -> Tool:
    """The tool whose description shares the most words with ``need``."""
    wanted = set(re.findall(r"[a-z]+", need.lower()))
    return max(
        tools, key=lambda tool: len(wanted & set(re.findall(r"[a-z]+", tool.description.lower())))
    )


async def test_a_scripted_model_answers_from_the_passages_search_found(url: str) -> None:
    question = "What scorches tea bushes on winter nights?"
    async with session(url, "reader-a") as agent:
        tools = (await agent.list_tools()).tools
        tool = chosen_tool(tools, "find passages in the knowledge base that answer a question")
        result = await agent.call_tool(tool.name, {"query": question, "namespace": "team-a-docs"})
    assert tool.name == "search"
    numbered = re.findall(r"^\[(\d+)\] (.+?) - score", result.content[0].text, re.MULTILINE)
    number, title = numbered[0]
    passage = result.structured_content["matches"][int(number) - 1]
    sentence = passage["text"].strip().splitlines()[-1].rstrip(".")
    answer = f"{sentence} [{number}]."
    assert (
        answer
        == "Ground frost scorches the plucking table of tea bushes on still winter nights [1]."
    )
    assert title == passage["title"] == "Frost"
