"""The knowledge base as a LangChain retriever (the extra ``retrieval-service[langchain]``)::

    async with retrieval.connect() as kb:
        retriever = KnowledgeBaseRetriever(knowledge=kb, namespace="handbook", top_k=4)
        documents = await retriever.ainvoke("how do I rotate an API key?")

Each ``Document`` is a matching chunk, best first: its text, and in ``metadata`` its chunk id,
the document's provenance and the scores (``retrieval.integrations.provenance``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import ConfigDict, Field, PrivateAttr

from retrieval.domain.models import RetrievalResult
from retrieval.integrations.extras import missing_extra
from retrieval.integrations.knowledge import (
    SCOPE_FIELDS,
    KnowledgeBaseApi,
    KnowledgeSearch,
    SearchScope,
    running_loop,
)
from retrieval.integrations.provenance import match_metadata

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
    )
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
except ImportError as error:
    raise missing_extra("langchain", error) from error


class KnowledgeBaseRetriever(BaseRetriever):
    """The chunks of a knowledge base that answer a query, as LangChain documents.

    ``invoke`` and ``ainvoke`` take any field but ``knowledge`` and ``loop``, and any search
    option, for one call: ``retriever.invoke("frost", top_k=3, mode="keyword")``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    knowledge: KnowledgeBaseApi = Field(
        description="What to search: a KnowledgeBase from retrieval.connect(), or a "
        "retrieval.grpc.RetrievalClient of a running server."
    )
    namespace: str | None = Field(default=None, description="None: the default namespace.")
    top_k: int = Field(default=5, ge=1, description="Documents returned at most.")
    domains: list[str] = Field(default_factory=list, description="Only these; none: every one.")
    threshold: float = Field(
        default=0.0, description="Leave out matches under this cosine similarity."
    )
    source_prefix: str | None = Field(
        default=None, description="Only documents from this path or URL or below it."
    )
    section: str | None = Field(default=None, description="Only chunks under this heading.")
    search_options: dict[str, Any] = Field(
        default_factory=dict,
        description="RetrievalOptions fields (mode='keyword', max_per_document=1); each one "
        "unset takes the service's setting.",
    )
    loop: asyncio.AbstractEventLoop | None = Field(
        default_factory=running_loop,
        exclude=True,
        description="The event loop the knowledge source was opened on, where every search "
        "runs; by default the loop running where the retriever is made.",
    )
    _search: KnowledgeSearch = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        fields = self.model_dump(include=set(SCOPE_FIELDS))
        scope = SearchScope.of(self.search_options, **fields)
        self._search = KnowledgeSearch(self.knowledge, scope, self.loop)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **changes: Any
    ) -> list[Document]:
        return documents(self._search.blocking(query, **changes))

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **changes: Any
    ) -> list[Document]:
        return documents(await self._search.awaited(query, **changes))


def documents(result: RetrievalResult) -> list[Document]:
    """The matches of ``result`` as documents, best first."""
    return [
        Document(id=match.chunk_id, page_content=match.content, metadata=match_metadata(match))
        for match in result.matches
    ]
