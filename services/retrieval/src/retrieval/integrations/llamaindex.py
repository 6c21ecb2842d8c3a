"""The knowledge base as a LlamaIndex retriever (the extra ``retrieval-service[llamaindex]``)::

    async with retrieval.connect() as kb:
        retriever = KnowledgeBaseRetriever(kb, namespace="handbook", top_k=4)
        nodes = await retriever.aretrieve("how do I rotate an API key?")

Each ``NodeWithScore`` is a matching chunk, best first, scored by the ranking: a ``TextNode``
with the chunk's id and text, in ``metadata`` the document's provenance and the scores
(``retrieval.integrations.provenance``), and as its ``SOURCE`` the document's id.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from retrieval.domain.models import RetrievalMatch, RetrievalResult
from retrieval.integrations.extras import missing_extra
from retrieval.integrations.knowledge import (
    KnowledgeBaseApi,
    KnowledgeSearch,
    SearchScope,
    running_loop,
)
from retrieval.integrations.provenance import match_metadata

try:
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import (
        NodeRelationship,
        NodeWithScore,
        QueryBundle,
        RelatedNodeInfo,
        TextNode,
    )
except ImportError as error:
    raise missing_extra("llamaindex", error) from error

HIDDEN_FROM_THE_MODEL = ["chunk_id", "document_id", "score", "scores", "document_metadata"]
"""Metadata a response synthesizer leaves out of the context it gives the model: ids and
numbers that help a program, not an answer."""


class KnowledgeBaseRetriever(BaseRetriever):
    """The chunks of a knowledge base that answer a query, as LlamaIndex nodes.

    ``knowledge``: a KnowledgeBase from ``retrieval.connect()``, or a
    ``retrieval.grpc.RetrievalClient`` of a running server; ``search_options``:
    ``RetrievalOptions`` fields (``mode="keyword"``), each one unset taking the service's
    setting; ``loop``: the event loop the knowledge source was opened on, where every search
    runs (by default the loop running where the retriever is made).
    """

    def __init__(
        self,
        knowledge: KnowledgeBaseApi,
        *,
        namespace: str | None = None,
        top_k: int = 5,
        domains: Sequence[str] = (),
        threshold: float = 0.0,
        source_prefix: str | None = None,
        section: str | None = None,
        search_options: Mapping[str, Any] | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
        **base: Any,
    ) -> None:
        super().__init__(**base)
        scope = SearchScope.of(
            search_options or {},
            namespace=namespace,
            top_k=top_k,
            domains=domains,
            threshold=threshold,
            source_prefix=source_prefix,
            section=section,
        )
        self._search = KnowledgeSearch(knowledge, scope, loop or running_loop())

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return scored_nodes(self._search.blocking(query_bundle.query_str))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return scored_nodes(await self._search.awaited(query_bundle.query_str))


def scored_nodes(result: RetrievalResult) -> list[NodeWithScore]:
    """The matches of ``result`` as nodes scored by the ranking, best first."""
    return [NodeWithScore(node=text_node(match), score=match.score) for match in result.matches]


def text_node(match: RetrievalMatch) -> TextNode:
    """The chunk of ``match`` as a node whose source is its document."""
    return TextNode(
        id_=match.chunk_id,
        text=match.content,
        metadata=match_metadata(match),
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=match.document_id)},
        excluded_llm_metadata_keys=HIDDEN_FROM_THE_MODEL,
        excluded_embed_metadata_keys=HIDDEN_FROM_THE_MODEL,
    )
