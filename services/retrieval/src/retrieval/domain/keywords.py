"""What the keyword index port stores and returns."""

from __future__ import annotations

from typing import NamedTuple

from pydantic import Field

from retrieval.domain.metadata import Metadata
from retrieval.domain.models import Frozen
from retrieval.domain.vectors import MAX_RECORD_ID_CHARS


class KeywordRecord(Frozen):
    """A chunk's searchable text with its id and filterable metadata."""

    id: str = Field(min_length=1, max_length=MAX_RECORD_ID_CHARS, description="Record id.")
    text: str = Field(min_length=1, description="Text to match: the chunk with its title.")
    metadata: Metadata = Field(default_factory=dict, description="Filterable attributes.")


class KeywordMatch(NamedTuple):
    """A record the keyword index found for a query. A named tuple, like ``QueryMatch``: an
    index builds a hundred or more per query from its own records."""

    id: str
    """Record id."""
    score: float
    """Relevance, above 0; higher is better, scale per adapter."""
