"""A Reranker plain enough to be obviously right: the share of the query's terms a passage has."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from retrieval.domain.keyword_terms import terms
from retrieval.domain.reranking import RerankedPassage
from retrieval.errors import InvalidRequestError


@dataclass(frozen=True)
class RerankCall:
    """One call as the reranker received it."""

    query: str
    passages: tuple[str, ...]
    top_n: int


class WordOverlapReranker:
    """Scores a passage by the share of the query's distinct terms (``keyword_terms``) found
    in it, 0 to 1 (0 for every passage when the query has no terms); records every call."""

    def __init__(self, *, model: str = "word-overlap") -> None:
        self._model = model
        self.calls: list[RerankCall] = []

    @property
    def model(self) -> str:
        return self._model

    async def rerank(
        self, query: str, passages: Sequence[str], top_n: int
    ) -> list[RerankedPassage]:
        self.calls.append(RerankCall(query=query, passages=tuple(passages), top_n=top_n))
        if not passages:
            return []
        if top_n < 1:
            raise InvalidRequestError("top_n must be at least 1", field="top_n")
        if not query.strip():
            raise InvalidRequestError("the query is blank", field="query")
        wanted = set(terms(query))
        scored = [
            RerankedPassage(
                index=index,
                score=len(wanted & set(terms(passage))) / len(wanted) if wanted else 0.0,
            )
            for index, passage in enumerate(passages)
        ]
        return sorted(scored, key=lambda passage: (-passage.score, passage.index))[:top_n]
