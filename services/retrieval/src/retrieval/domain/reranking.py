"""What the reranker port returns."""

from __future__ import annotations

from pydantic import Field

from retrieval.domain.models import Frozen


class RerankedPassage(Frozen):
    """One passage of a rerank call, by its position in the call's input."""

    index: int = Field(ge=0, description="Position of the passage in the input.")
    score: float = Field(description="Relevance to the query; higher is better, 0 to 1.")
