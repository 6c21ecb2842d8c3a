"""MCP from the ``retrieval`` command on the embedded stack and the real model: ``retrieval
mcp`` over stdio as an agent's configuration starts it, and the MCP endpoint ``retrieval
serve`` opens beside gRPC when RETRIEVAL_MCP_PORT is set."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from retrieval.domain.tenants import token_digest
from retrieval_testkit.served_process import CLI, START_S, serve_environment, served_process

NOTE = {
    "text": "# Withering\n\nWithering takes the moisture of plucked tea leaves to about 60 "
    "percent over twelve to eighteen hours.",
    "title": "Withering",
    "domain": "processing",
}
READ_TOOLS = {"search", "ask", "list_documents", "read_document"}


async def test_an_agent_uses_every_tool_over_stdio(tmp_path: Path) -> None:
    environment = serve_environment(tmp_path / "data", RETRIEVAL_LOG_FORMAT="console")
    server = StdioServerParameters(
        command=str(CLI), args=["mcp", "--allow-writes"], env=environment, cwd=tmp_path
    )
    async with asyncio.timeout(START_S), Client(server) as agent:
        tools = {tool.name for tool in (await agent.list_tools()).tools}
        added = await agent.call_tool("add_documents", {"documents": [NOTE]})
        found = await agent.call_tool("search", {"query": "how long does withering take"})
        read = await agent.call_tool("read_document", {"document_id": "Withering"})
        listed = await agent.call_tool("list_documents", {})
        asked = await agent.call_tool("ask", {"question": "How long does withering take?"})
        refused = await agent.call_tool("search", {"query": "withering", "top_k": 1000})
        deleted = await agent.call_tool("delete_documents", {"document_ids": ["Withering"]})
    assert tools == READ_TOOLS | {"add_documents", "delete_documents"}
    assert added.structured_content["documents"][0]["outcome"] == "created"
    assert found.structured_content["matches"][0]["title"] == "Withering"
    assert "[1] Withering" in found.content[0].text
    assert "twelve to eighteen hours" in read.content[0].text
    assert listed.structured_content["total"] == 1
    assert asked.is_error
    assert "RETRIEVAL_LLM_MODEL" in asked.content[0].text
    assert refused.is_error
    assert refused.content[0].text.startswith("top_k:")
    assert deleted.structured_content["deleted"] == ["Withering"]


async def test_retrieval_serve_opens_mcp_beside_grpc_and_stops_both_on_sigterm(
    tmp_path: Path,
) -> None:
    tokens = tmp_path / "tokens.json"
    entry = {"name": "ops", "sha256": token_digest("ops-secret"), "namespaces": ["*"]}
    tokens.write_text(json.dumps([entry | {"scopes": ["admin"]}]))
    environment = serve_environment(
        tmp_path / "data", RETRIEVAL_GRPC_TOKENS_FILE=str(tokens), RETRIEVAL_MCP_PORT="0"
    )
    async with served_process(tmp_path, environment) as served:
        serving = await asyncio.wait_for(served.log.event("mcp.serving"), timeout=START_S)
        url = f"http://127.0.0.1:{serving['port']}/mcp"
        headers = {"Authorization": "Bearer ops-secret"}
        async with (
            create_mcp_http_client(headers=headers) as http,
            Client(streamable_http_client(url, http_client=http)) as agent,
        ):
            tools = {tool.name for tool in (await agent.list_tools()).tools}
            await agent.call_tool("add_documents", {"documents": [NOTE]})
            found = await agent.call_tool("search", {"query": "withering"})
        served.process.terminate()
        exit_code = await asyncio.wait_for(served.process.wait(), timeout=START_S)
    assert exit_code == 0
    assert tools == READ_TOOLS | {"add_documents", "delete_documents"}
    assert found.structured_content["matches"][0]["document_id"] == "Withering"
