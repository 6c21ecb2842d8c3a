"""The MCP tools through the official client, in process, over the in-memory stores and the
hash embedder: schemas, results, errors of one line, and writes only when allowed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from retrieval.domain.models import RagDocument, RetrievalQuery
from retrieval.domain.tenants import Grant, Tenants, token_digest
from retrieval.lifecycle import Application, running
from retrieval.mcp import results
from retrieval.mcp.access import LocalAccess, TenantTokenVerifier
from retrieval.mcp.server import mcp_server
from retrieval.mcp.tools import WRITE_TOOLS, RetrievalTools
from retrieval.settings import Settings
from retrieval_testkit import InMemoryVectorIndex
from retrieval_testkit.container import in_memory_container
from retrieval_testkit.scripted_llm import ScriptedLlm

FROST = RagDocument(
    document_id="frost",
    title="Frost",
    domain="weather_patterns",
    content="# Frost\n\nGround frost scorches the plucking table of tea bushes on still "
    "winter nights.\n\n## Protection\n\nSprinklers and shade trees keep frost off the bushes.",
)
READ_TOOLS = {"search", "ask", "list_documents", "read_document"}


class StalledVectorIndex(InMemoryVectorIndex):
    """An index that never answers a query, as a store behind a dead connection."""

    async def query(self, *args: Any, **kwargs: Any) -> Any:
        await asyncio.Event().wait()


async def started(
    tmp_path: Path, timeout_s: float = 30.0, **replacements: object
) -> AsyncIterator[Application]:
    """An application over ``FROST``; its tool calls time out after ``timeout_s`` (the first
    search of a process warms its indexes up: seconds on a busy machine)."""
    settings = Settings(data_dir=tmp_path, result_cache_entries=0, mcp_call_timeout_s=timeout_s)
    async with running(settings, in_memory_container(settings, **replacements)) as app:
        await app.ingestion.ingest([FROST], None)
        yield app


@pytest.fixture
async def application(tmp_path: Path) -> AsyncIterator[Application]:
    async for app in started(tmp_path, llm=ScriptedLlm()):
        yield app


def client(app: Application, namespaces: Sequence[str] = (), writes: bool = False) -> Client:
    return Client(mcp_server(app, LocalAccess(namespaces, writes)))


async def test_the_tools_offered_describe_every_argument_and_their_output(
    application: Application,
) -> None:
    async with client(application) as reader:
        tools = {tool.name: tool for tool in (await reader.list_tools()).tools}
    assert tools.keys() == READ_TOOLS
    for tool in tools.values():
        assert tool.description
        assert tool.output_schema
        for name, argument in tool.input_schema["properties"].items():
            assert argument.get("description"), f"{tool.name}.{name}"
    matches = tools["search"].output_schema["properties"]["matches"]["items"]["properties"]
    assert {"text", "title", "source", "section", "pages", "score", "chunk_id"} <= matches.keys()


def references(schema: object) -> list[str]:
    """The ``$ref``s and ``$defs`` anywhere in ``schema``."""
    if isinstance(schema, dict):
        found = [key for key in schema if key in ("$ref", "$defs")]
        return found + [ref for value in schema.values() for ref in references(value)]
    if isinstance(schema, list):
        return [ref for value in schema for ref in references(value)]
    return []


async def test_the_output_schemas_are_self_contained_for_a_client_to_validate_quickly(
    application: Application,
) -> None:
    async with client(application, writes=True) as writer:
        tools = {tool.name: tool.output_schema for tool in (await writer.list_tools()).tools}
    assert {name: references(schema) for name, schema in tools.items()} == {
        name: [] for name in tools
    }
    source = tools["search"]["properties"]["matches"]["items"]["properties"]["source"]
    assert source["type"] == ["string", "null"]


def test_a_result_is_validated_once_by_the_model_it_is_dumped_from(
    application: Application,
) -> None:
    tools = RetrievalTools(application, LocalAccess((), writes=True), 30.0).tools()
    assert all(tool.output_schema for tool in tools)
    assert [tool.name for tool in tools if tool.fn_metadata.output_model is not None] == []


async def test_the_write_tools_are_offered_only_when_writes_are_allowed(
    application: Application,
) -> None:
    async with client(application, writes=True) as writer:
        names = {tool.name for tool in (await writer.list_tools()).tools}
    assert names == READ_TOOLS | WRITE_TOOLS


async def test_search_arguments_have_the_bounds_of_a_retrieval_query(
    application: Application,
) -> None:
    async with client(application) as reader:
        tools = {tool.name: tool for tool in (await reader.list_tools()).tools}
    arguments = tools["search"].input_schema["properties"]
    query = RetrievalQuery.model_json_schema()["properties"]
    for argument, field in [("top_k", "top_k"), ("threshold", "confidence_threshold")]:
        for bound in ("default", "minimum", "maximum"):
            assert arguments[argument].get(bound) == query[field].get(bound), (argument, bound)
    assert arguments["query"]["maxLength"] == query["query"]["maxLength"]


async def test_search_answers_numbered_passages_as_structure_and_text(
    application: Application,
) -> None:
    async with client(application) as reader:
        result = await reader.call_tool("search", {"query": "frost on tea bushes", "top_k": 2})
    assert not result.is_error
    found = result.structured_content
    assert found["namespace"] == "default"
    first = found["matches"][0]
    assert first["number"] == 1
    assert first["document_id"] == "frost"
    assert first["title"] == "Frost"
    assert "[1] Frost" in result.content[0].text
    assert first["text"] in result.content[0].text


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"query": "frost", "top_k": 0}, "top_k"),
        ({"query": "frost", "threshold": 2}, "threshold"),
        ({"query": "frost", "mode": "psychic"}, "mode"),
        ({"query": "frost", "domains": ["Not A Domain"]}, "domains"),
        ({}, "query"),
    ],
)
async def test_a_bad_argument_is_a_tool_error_of_one_line_naming_it(
    application: Application, arguments: dict[str, Any], field: str
) -> None:
    async with client(application) as reader:
        result = await reader.call_tool("search", arguments)
    assert result.is_error
    text = result.content[0].text
    assert "\n" not in text
    assert field in text


async def test_an_unknown_namespace_is_a_tool_error_naming_it(application: Application) -> None:
    async with client(application) as reader:
        result = await reader.call_tool("search", {"query": "frost", "namespace": "elsewhere"})
    assert result.is_error
    assert "'elsewhere'" in result.content[0].text


async def test_a_namespace_outside_the_allowed_ones_is_refused(application: Application) -> None:
    async with client(application, namespaces=["team-*"]) as reader:
        searched = await reader.call_tool("search", {"query": "frost"})
        listed = await reader.call_tool("list_documents", {})
    for result in (searched, listed):
        assert result.is_error
        assert "RETRIEVAL_MCP_NAMESPACES" in result.content[0].text


async def test_a_write_tool_is_refused_when_writes_are_off(application: Application) -> None:
    async with client(application) as reader:
        result = await reader.call_tool("delete_documents", {"document_ids": ["frost"]})
        listed = await reader.call_tool("list_documents", {})
    assert result.is_error
    assert "--allow-writes" in result.content[0].text
    assert listed.structured_content["total"] == 1


async def test_documents_added_are_listed_read_found_and_deleted(
    application: Application,
) -> None:
    note = {"text": "# Pruning\n\nPrune tea bushes after the monsoon.", "title": "Pruning"}
    async with client(application, writes=True) as writer:
        added = await writer.call_tool(
            "add_documents", {"documents": [note | {"domain": "general"}]}
        )
        listed = await writer.call_tool("list_documents", {"limit": 1})
        read = await writer.call_tool("read_document", {"document_id": "Pruning"})
        found = await writer.call_tool("search", {"query": "monsoon pruning", "top_k": 1})
        deleted = await writer.call_tool("delete_documents", {"document_ids": ["Pruning", "x"]})
        after = await writer.call_tool("read_document", {"document_id": "Pruning"})
    assert added.structured_content["documents"][0]["outcome"] == "created"
    assert listed.structured_content["total"] == 2
    assert listed.structured_content["next_offset"] == 1
    assert "Prune tea bushes" in read.content[0].text
    assert found.structured_content["matches"][0]["document_id"] == "Pruning"
    assert deleted.structured_content["deleted"] == ["Pruning"]
    assert deleted.structured_content["missing"] == ["x"]
    assert after.is_error
    assert "'Pruning'" in after.content[0].text


async def test_a_refused_document_is_named_by_its_position(application: Application) -> None:
    document = {"text": "Text.", "title": "T", "domain": "Not A Domain"}
    async with client(application, writes=True) as writer:
        result = await writer.call_tool("add_documents", {"documents": [document]})
    assert result.is_error
    assert "documents.0.domain" in result.content[0].text


async def test_read_document_pages_through_the_chunks_in_order(
    application: Application,
) -> None:
    async with client(application) as reader:
        first = await reader.call_tool("read_document", {"document_id": "frost", "limit": 1})
        whole = await reader.call_tool("read_document", {"document_id": "frost"})
    chunks = whole.structured_content["chunks"]
    assert [c["position"] for c in chunks] == sorted(c["position"] for c in chunks)
    assert first.structured_content["chunks"] == chunks[:1]
    expected_next = 1 if len(chunks) > 1 else None
    assert first.structured_content["next_offset"] == expected_next


async def test_each_document_is_a_resource(application: Application) -> None:
    async with client(application) as reader:
        templates = (await reader.list_resource_templates()).resource_templates
        read = await reader.read_resource("retrieval://default/documents/frost")
    assert [t.uri_template for t in templates] == [
        "retrieval://{namespace}/documents/{document_id}"
    ]
    assert "Ground frost scorches" in read.contents[0].text


async def test_ask_reports_the_answer_as_it_is_written_and_cites_its_sources(
    application: Application,
) -> None:
    pieces: list[str | None] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        pieces.append(message)

    async with client(application) as reader:
        result = await reader.call_tool(
            "ask", {"question": "What scorches tea bushes?"}, progress_callback=progress
        )
    answer = result.structured_content
    assert answer["answered"]
    assert answer["text"] == "Answer [1]."
    assert "".join(p or "" for p in pieces) == answer["text"]
    assert answer["citations"][0]["document_id"] == "frost"
    assert "Sources:\n[1] Frost" in result.content[0].text


async def test_ask_without_a_chat_model_names_the_settings_of_the_server(
    tmp_path: Path,
) -> None:
    async for app in started(tmp_path):
        async with client(app) as reader:
            result = await reader.call_tool("ask", {"question": "What scorches tea bushes?"})
    text = result.content[0].text
    assert result.is_error
    assert "\n" not in text
    assert "RETRIEVAL_LLM_BASE_URL" in text
    assert "RETRIEVAL_LLM_MODEL" in text
    assert "server's side" in text


async def test_a_stalled_store_is_a_tool_error_within_the_call_timeout(tmp_path: Path) -> None:
    async for app in started(tmp_path, timeout_s=0.5, vector_index=StalledVectorIndex()):
        async with client(app) as reader:
            async with asyncio.timeout(5):
                result = await reader.call_tool("search", {"query": "frost"})
    assert result.is_error
    assert "RETRIEVAL_MCP_CALL_TIMEOUT_S" in result.content[0].text


async def test_a_known_token_verifies_as_its_grant_and_an_unknown_one_not_at_all() -> None:
    grant = Grant(
        name="reader-a",
        sha256=token_digest("reader-secret"),
        namespaces=("team-a-*",),
        scopes=frozenset({"read"}),
    )
    verifier = TenantTokenVerifier(Tenants([grant], "tokens.json"))
    access = await verifier.verify_token("reader-secret")
    assert access is not None
    assert access.client_id == "reader-a"
    assert access.scopes == ["read"]
    assert await verifier.verify_token("guess") is None


MATCH = {
    "number": 1,
    "chunk_id": "frost#0",
    "document_id": "frost",
    "title": "Frost",
    "source": None,
    "section": "Protection",
    "pages": [],
    "text": "Sprinklers keep frost off the bushes.",
    "score": 0.5,
}


@pytest.mark.parametrize(
    "match",
    [MATCH, {**MATCH, "source": "frost.md"}, {**MATCH, "source": 3}, {**MATCH, "extra": 1}],
)
def test_a_self_contained_schema_accepts_what_the_model_schema_accepts(
    match: dict[str, Any],
) -> None:
    schema = results.SearchResults.model_json_schema()
    found = {"query": "frost", "namespace": "default", "matches": [match], "degraded": []}
    verdicts = [
        Draft202012Validator(s).is_valid(found) for s in (schema, results.self_contained(schema))
    ]
    assert verdicts[0] == verdicts[1]
