"""The MCP server over a running application: its tools, its documents as resources, and the
write tools listed only to callers who may write."""

from __future__ import annotations

from typing import Any

from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer

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


def mcp_server(
    application: Application,
    access: Access,
    token_verifier: TokenVerifier | None = None,
    auth: AuthSettings | None = None,
) -> MCPServer:
    """The tools over ``application`` for callers ``access`` judges; over HTTP,
    ``token_verifier`` and ``auth`` make every request carry a known bearer token."""
    tools = RetrievalTools(application, access, application.settings.mcp_call_timeout_s)
    server: MCPServer = MCPServer(
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
