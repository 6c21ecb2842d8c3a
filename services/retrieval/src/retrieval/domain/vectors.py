"""What the vector index port stores and returns."""

from __future__ import annotations

from pydantic import Field

from retrieval.domain.metadata import Metadata
from retrieval.domain.models import Frozen

MAX_RECORD_ID_CHARS = 512


class VectorRecord(Frozen):
    """A vector with its id and filterable metadata."""

    id: str = Field(min_length=1, max_length=MAX_RECORD_ID_CHARS, description="Record id.")
    values: tuple[float, ...] = Field(min_length=1, description="Dense embedding.")
    metadata: Metadata = Field(default_factory=dict, description="Filterable attributes.")


class QueryMatch(Frozen):
    """A record the index found for a query vector."""

    id: str = Field(description="Record id.")
    score: float = Field(description="Cosine similarity to the query vector.")
    values: tuple[float, ...] | None = Field(
        default=None, description="The stored vector, when asked for."
    )
    metadata: Metadata = Field(default_factory=dict, description="Stored metadata.")


class NamespaceStats(Frozen):
    """Size of one namespace."""

    vector_count: int = Field(ge=0, description="Records in the namespace.")


class IndexStats(Frozen):
    """Size and shape of a vector index."""

    dimension: int | None = Field(description="Vector dimension, unknown until first write.")
    total_vector_count: int = Field(ge=0, description="Records across all namespaces.")
    namespaces: dict[str, NamespaceStats] = Field(description="Per-namespace sizes.")
