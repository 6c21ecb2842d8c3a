"""The MCP tools: each checks the caller's access, calls the application's service, and
answers structured content with a text rendering; a refused or failed call is a tool error
of one line, within ``RETRIEVAL_MCP_CALL_TIMEOUT_S``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing, asynccontextmanager
from pathlib import PurePath
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import MCPServerError, ResourceError, ToolError
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, Field, ValidationError

from retrieval.adapters.files.document_files import slug_from_path
from retrieval.domain.answers import AnswerDelta, AnswerDone
from retrieval.domain.models import (
    MAX_QUERY_CHARS,
    RagDocument,
    RetrievalOptions,
    RetrievalQuery,
    invalid_request,
    namespace_or_default,
    validated,
)
from retrieval.domain.search_plan import MAX_TOP_K, SearchMode
from retrieval.domain.tenants import Scope
from retrieval.errors import BackendNotConfiguredError, RetrievalError
from retrieval.lifecycle import Application
from retrieval.mcp import results
from retrieval.mcp.access import Access

WRITE_TOOLS = frozenset({"add_documents", "delete_documents"})
PAGE_LIMIT = 100

NamespaceArgument = Annotated[
    str | None,
    Field(
        description="Namespace (one knowledge base of the server) to use; omit for the "
        "server's default."
    ),
]
Offset = Annotated[int, Field(ge=0, description="Skip this many items (paging); start at 0.")]
Limit = Annotated[int, Field(ge=1, le=PAGE_LIMIT, description="Most items in this page.")]


class NewDocument(BaseModel):
    text: str = Field(min_length=1, description="The document's text, Markdown allowed.")
    title: str = Field(min_length=1, max_length=512, description="Its title.")
    domain: str = Field(description="Its knowledge domain, lower_snake_case, e.g. 'general'.")
    document_id: str | None = Field(
        default=None,
        description="Id to store it under (letters, digits, '.', '_', '-'); omit to derive "
        "one from the title. A document of the same id is replaced.",
    )


def one_line(text: str) -> str:
    return " ".join(text.split())


class RetrievalTool(Tool):
    """A tool whose refused arguments are reported on one line, naming the first field, whose
    output schema is self-contained (``results.self_contained``), and whose structured
    content is validated once, by the ``results`` models it is dumped from: the SDK publishes
    the schema but does not validate the dumped content against the model again."""

    @classmethod
    def of(cls, function: Callable[..., Any]) -> RetrievalTool:
        tool = cls.from_function(function)
        metadata = tool.fn_metadata
        if metadata.output_schema is not None:
            metadata.output_schema = results.self_contained(metadata.output_schema)
            metadata.output_model = None
        return tool

    async def run(
        self, arguments: dict[str, Any], context: Any, convert_result: bool = False
    ) -> Any:
        try:
            return await super().run(arguments, context, convert_result)
        except ToolError as error:
            # The SDK raises the arguments' ValidationError as the cause of a ToolError.
            if isinstance(error.__cause__, ValidationError):
                raise ToolError(str(invalid_request(error.__cause__))) from error.__cause__
            raise


def tool_result(content: BaseModel, text: str) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=content.model_dump(mode="json"),
    )


class RetrievalTools:
    """The tools over a running application's services, for callers ``access`` judges."""

    def __init__(self, application: Application, access: Access, timeout_s: float) -> None:
        self._application = application
        self._access = access
        self._timeout_s = timeout_s

    def namespace(self, scope: Scope, namespace: str | None) -> str:
        """``namespace`` (the default when None; a blank one is refused), once the caller is
        found to hold ``scope``."""
        chosen = namespace_or_default(namespace, self._application.settings.default_namespace)
        self._access.check(scope, chosen)
        return chosen

    @asynccontextmanager
    async def answering(self, failure: type[MCPServerError] = ToolError) -> AsyncIterator[None]:
        """A service error or the time running out, as a ``failure`` of one line (a tool
        error, or a resource error)."""
        try:
            async with asyncio.timeout(self._timeout_s):
                yield
        except TimeoutError as error:
            raise failure(
                f"the service did not answer within {self._timeout_s:g} s "
                "(RETRIEVAL_MCP_CALL_TIMEOUT_S): a store is slow or unreachable; try again later"
            ) from error
        except BackendNotConfiguredError as error:
            raise failure(
                f"not configured on the server's side: {one_line(str(error))} (the server's "
                "settings, not this call's arguments)"
            ) from error
        except RetrievalError as error:
            raise failure(one_line(str(error))) from error

    def tools(self) -> list[Tool]:
        functions = [
            self.search,
            self.ask,
            self.list_documents,
            self.read_document,
            self.add_documents,
            self.delete_documents,
        ]
        return [RetrievalTool.of(function) for function in functions]

    async def search(
        self,
        query: Annotated[
            str,
            Field(
                min_length=1,
                max_length=MAX_QUERY_CHARS,
                description="What to find: a question or keywords, in natural language.",
            ),
        ],
        namespace: NamespaceArgument = None,
        domains: Annotated[
            list[str],
            Field(description="Only documents of these knowledge domains; empty: all."),
        ] = [],  # noqa: B006 - the SDK copies arguments into a fresh model
        top_k: Annotated[
            int, Field(ge=1, le=MAX_TOP_K, description="Most passages to return.")
        ] = 5,
        threshold: Annotated[
            float,
            Field(
                ge=0.0,
                le=1.0,
                description="Drop passages whose similarity to the query is below this (0 to "
                "1); 0 keeps all.",
            ),
        ] = 0.0,
        source_prefix: Annotated[
            str | None,
            Field(description="Only documents whose path or URL is this or lies below it."),
        ] = None,
        section: Annotated[
            str | None,
            Field(description="Only passages of exactly this section (heading path)."),
        ] = None,
        mode: Annotated[
            SearchMode | None,
            Field(
                description="hybrid (meaning and keywords, the default), dense (meaning "
                "only) or keyword (exact words)."
            ),
        ] = None,
    ) -> Annotated[CallToolResult, results.SearchResults]:
        """Search the knowledge base for passages that answer a question, best first. Use
        it to find facts before answering; cite the passages it returns as [n]. Each
        passage has its text, document title, source, section, pages and score."""
        async with self.answering():
            request = validated(
                RetrievalQuery,
                query=query,
                namespace=self.namespace(Scope.READ, namespace),
                domains=tuple(domains),
                top_k=top_k,
                confidence_threshold=threshold,
                source_prefix=source_prefix,
                section=section,
                options=validated(RetrievalOptions, mode=mode),
            )
            found = results.search_results(
                await self._application.retrieval.retrieve_query(request)
            )
        return tool_result(found, results.search_text(found))

    async def ask(
        self,
        question: Annotated[
            str,
            Field(min_length=1, max_length=MAX_QUERY_CHARS, description="The question."),
        ],
        ctx: Context,
        namespace: NamespaceArgument = None,
    ) -> Annotated[CallToolResult, results.AnswerResult]:
        """Answer a question from the knowledge base with the server's chat model, citing
        its sources as [n]. Needs a chat model configured on the server; search works
        without one. Progress notifications carry the answer as it is written."""
        async with self.answering():
            query = validated(
                RetrievalQuery, query=question, namespace=self.namespace(Scope.READ, namespace)
            )
            events = self._application.answers.stream(query)
            written = 0
            async with aclosing(events):
                async for event in events:
                    if isinstance(event, AnswerDelta):
                        written += 1
                        await ctx.report_progress(written, message=event.text)
                    elif isinstance(event, AnswerDone):
                        answer = results.answer_result(event.answer)
        return tool_result(answer, results.answer_text(answer))

    async def list_documents(
        self,
        namespace: NamespaceArgument = None,
        source_prefix: Annotated[
            str | None,
            Field(description="Only documents whose path or URL is this or lies below it."),
        ] = None,
        offset: Offset = 0,
        limit: Limit = 50,
    ) -> Annotated[CallToolResult, results.DocumentList]:
        """List the documents of a namespace by id, with title, source and size, a page at
        a time. Use it to see what the knowledge base holds, or to find a document's id."""
        async with self.answering():
            chosen = self.namespace(Scope.READ, namespace)
            documents = await self._application.library.documents(
                chosen, source_prefix=source_prefix
            )
        listed = results.document_list(chosen, documents, offset, limit)
        return tool_result(listed, results.document_list_text(listed))

    async def read_document(
        self,
        document_id: Annotated[
            str, Field(description="The document's id, as search or list_documents give it.")
        ],
        namespace: NamespaceArgument = None,
        offset: Offset = 0,
        limit: Limit = 20,
    ) -> Annotated[CallToolResult, results.DocumentText]:
        """Read a document's text: its chunks in order, a page at a time. Use it to read
        around a passage search found."""
        async with self.answering():
            chosen = self.namespace(Scope.READ, namespace)
            stored = await self._application.library.document(document_id, chosen)
        read = results.document_text(chosen, stored.summary, stored.chunks, offset, limit)
        return tool_result(read, results.document_text_text(read))

    async def add_documents(
        self,
        documents: Annotated[
            list[NewDocument],
            Field(min_length=1, max_length=PAGE_LIMIT, description="The documents to add."),
        ],
        namespace: NamespaceArgument = None,
    ) -> Annotated[CallToolResult, results.AddedDocuments]:
        """Add documents to the knowledge base (or replace those of the same id), so that
        search finds them. Offered to callers allowed to write."""
        async with self.answering():
            chosen = self.namespace(Scope.WRITE, namespace)
            outcomes = await self._application.ingestion.ingest(
                [rag_document(position, new) for position, new in enumerate(documents)],
                chosen,
                replace=True,
                refused_as_outcomes=True,
            )
        added = results.added_documents(chosen, outcomes)
        return tool_result(added, results.added_text(added))

    async def delete_documents(
        self,
        document_ids: Annotated[
            list[str],
            Field(min_length=1, max_length=PAGE_LIMIT, description="Ids of the documents."),
        ],
        namespace: NamespaceArgument = None,
    ) -> Annotated[CallToolResult, results.DeletedDocuments]:
        """Delete documents from the knowledge base by id. Offered to callers allowed to
        write."""
        async with self.answering():
            chosen = self.namespace(Scope.WRITE, namespace)
            report = await self._application.library.delete(chosen, document_ids)
        deleted = results.deleted_documents(report)
        return tool_result(deleted, results.deleted_text(deleted))

    async def document_resource(self, namespace: str, document_id: str) -> str:
        """A document's whole text, for ``retrieval://{namespace}/documents/{document_id}``."""
        async with self.answering(ResourceError):
            stored = await self._application.library.document(
                document_id, self.namespace(Scope.READ, namespace)
            )
        return "\n\n".join(chunk.content for chunk in stored.chunks)


def rag_document(position: int, new: NewDocument) -> RagDocument:
    """The document ``new`` describes; its id from its title when it has none."""
    try:
        return RagDocument(
            document_id=new.document_id or slug_from_path(PurePath(new.title)),
            title=new.title,
            domain=new.domain,
            content=new.text,
        )
    except ValidationError as error:
        raise invalid_request(error, prefix=f"documents.{position}") from error
