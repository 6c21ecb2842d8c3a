from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from retrieval.domain.reranking import RerankedPassage


class Reranker(Protocol):
    """Orders passages by relevance to a query with a model that reads each pair together
    (a cross-encoder), more precisely than the searches that found them."""

    @property
    def model(self) -> str:
        """Name of the reranking model."""
        ...

    async def rerank(
        self, query: str, passages: Sequence[str], top_n: int
    ) -> list[RerankedPassage]:
        """The ``top_n`` most relevant passages (all of them when fewer), best first, ties by
        index; every index appears at most once. An adapter whose backend caps a call splits
        the passages or truncates them to fit, as its documentation says. No passages give
        ``[]`` whatever the other arguments; otherwise ``top_n`` < 1 or a blank query raises
        ``InvalidRequestError``. Raises ``BackendError`` when the model cannot answer."""
        ...
