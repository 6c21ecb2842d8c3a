from __future__ import annotations

from collections.abc import Sequence

from retrieval.domain.reranking import RerankedPassage
from retrieval.errors import BackendNotConfiguredError


class NoReranker:
    """The reranker of a deployment that has none: every call says so, and a retrieval
    that asked for reranking keeps its fused order, flagged ``degraded``."""

    model = "none"

    async def rerank(
        self, query: str, passages: Sequence[str], top_n: int
    ) -> list[RerankedPassage]:
        raise BackendNotConfiguredError(
            "no reranker is configured: set RETRIEVAL_RERANK_BACKEND=pinecone"
        )
