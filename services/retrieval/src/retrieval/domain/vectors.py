"""What the vector index port stores and returns."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import NamedTuple

import numpy as np
from pydantic import Field

from retrieval.domain.metadata import Metadata, MetadataValue
from retrieval.domain.models import Frozen
from retrieval.errors import InvalidRequestError

MAX_RECORD_ID_CHARS = 512
MAX_FLOAT32 = 3.4028234663852886e38
"""The largest finite 32-bit float: every index stores vector values as float32."""


def check_finite(values: Sequence[float], *, field: str, owner: str | None = None) -> None:
    """``InvalidRequestError`` naming ``field`` (and ``owner``, the record) unless every value
    is a finite number a 32-bit float holds. NaN and infinity have no JSON form (the Pinecone
    SDK sends them as ``null``, which Pinecone refuses) and make every cosine NaN."""
    if np.all(np.abs(np.asarray(values, dtype=np.float64)) <= MAX_FLOAT32):
        return
    position, value = next(
        (n, v) for n, v in enumerate(values) if not (math.isfinite(v) and abs(v) <= MAX_FLOAT32)
    )
    subject = f"record {owner!r}" if owner is not None else "the vector"
    raise InvalidRequestError(
        f"{subject} holds {value} at position {position}; values must be finite 32-bit floats",
        field=field,
    )


class VectorRecord(Frozen):
    """A vector with its id and filterable metadata."""

    id: str = Field(min_length=1, max_length=MAX_RECORD_ID_CHARS, description="Record id.")
    values: tuple[float, ...] = Field(min_length=1, description="Dense embedding.")
    metadata: Metadata = Field(default_factory=dict, description="Filterable attributes.")


NO_METADATA: Mapping[str, MetadataValue] = MappingProxyType({})
"""The metadata of every match asked for without any (``include_metadata=False``): one empty
mapping, read-only since it is shared."""


class QueryMatch(NamedTuple):
    """A record the index found for a query vector. A named tuple, not a validating model: an
    index builds up to a thousand per query from its own stored records, and a pydantic model
    took a few microseconds each, most of a search's time in the service (a frozen dataclass
    takes twice a named tuple's time)."""

    id: str
    """Record id."""
    score: float
    """Cosine similarity to the query vector."""
    values: tuple[float, ...] | None
    """The stored vector, when asked for."""
    metadata: Mapping[str, MetadataValue]
    """Stored metadata; ``NO_METADATA`` when the query asked for none."""


class NamespaceStats(Frozen):
    """Size of one namespace."""

    vector_count: int = Field(ge=0, description="Records in the namespace.")


class IndexStats(Frozen):
    """Size and shape of a vector index."""

    dimension: int | None = Field(description="Vector dimension, unknown until first write.")
    total_vector_count: int = Field(ge=0, description="Records across all namespaces.")
    namespaces: dict[str, NamespaceStats] = Field(description="Per-namespace sizes.")
