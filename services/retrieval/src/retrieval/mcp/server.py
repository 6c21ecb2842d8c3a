"""The MCP server over a running application: its tools, its documents as resources, and the
write tools listed only to callers who may write."""

from __future__ import annotations

from typing import Any

from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.shared.inbound import find_invalid_x_mcp_header, x_mcp_header_map

from retrieval.lifecycle import Application
from retrieval.mcp.access import Access
from retrieval.mcp.tools import WRITE_TOOLS, RetrievalTools

SERVER_NAME = "retrieval"
DOCUMENT_URI = "retrieval://{namespace}/documents/{document_id}"
INSTRUCTIONS = (
    "A knowledge base of documents, searched by meaning and by keywords. Call `search` to find "
    "passages before answering and cite them as [n]; `read_document` reads a whole document; "
    "`list_documents` shows what a namespace holds. `ask` answers with the server's own chat "
    "model when it has one."
)


class WriteToolsOffered:
    """Middleware: lists the tools that write only to a caller who may write (the tools
    check again when called)."""

    def __init__(self, access: Access) -> None:
        self._access = access

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method != "tools/list" or not isinstance(result, dict) or self._access.may_write():
            return result
        return {**result, "tools": [t for t in result["tools"] if t["name"] not in WRITE_TOOLS]}


def declares_headers(input_schema: dict[str, Any]) -> bool:
    """Whether a tool's arguments declare ``Mcp-Param-*`` headers (valid ``x-mcp-header``
    annotations) for a call over HTTP to repeat; the SDK compares only those."""
    return find_invalid_x_mcp_header(input_schema) is None and bool(x_mcp_header_map(input_schema))


class RetrievalServer(MCPServer):
    """The SDK's server, except that before each call over HTTP it hands the SDK the input
    schema only of a tool whose arguments declare headers: for the others the SDK would walk
    the schema twice a call (about 45 us for ``search``) to find nothing to compare."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._declared: dict[str, tuple[dict[str, Any], bool]] = {}

    def _tool_input_schema(self, name: str) -> dict[str, Any] | None:
        schema = super()._tool_input_schema(name)
        if schema is None:
            return None
        known = self._declared.get(name)
        if known is None or known[0] is not schema:
            known = self._declared[name] = (schema, declares_headers(schema))
        return schema if known[1] else None


def mcp_server(
    application: Application,
    access: Access,
    token_verifier: TokenVerifier | None = None,
    auth: AuthSettings | None = None,
) -> RetrievalServer:
    """The tools over ``application`` for callers ``access`` judges; over HTTP,
    ``token_verifier`` and ``auth`` make every request carry a known bearer token."""
    tools = RetrievalTools(application, access, application.settings.mcp_call_timeout_s)
    server = RetrievalServer(
        SERVER_NAME,
        instructions=INSTRUCTIONS,
        tools=tools.tools(),
        token_verifier=token_verifier,
        auth=auth,
        middleware=[WriteToolsOffered(access)],
        log_level="WARNING",
    )
    server.resource(
        DOCUMENT_URI,
        name="document",
        description="A document's whole text, its chunks in order.",
        mime_type="text/markdown",
    )(tools.document_resource)
    return server
