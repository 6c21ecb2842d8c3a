from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from retrieval.domain.vectors import IndexStats, QueryMatch, VectorRecord

MetadataFilter = Mapping[str, Any]


class VectorIndex(Protocol):
    """Nearest-neighbour search over vectors with metadata, partitioned by namespace.

    Scores are cosine similarities. Filters use Pinecone's language
    (see ``retrieval.domain.filters``); a malformed filter raises
    ``InvalidFilterError`` rather than matching nothing. A namespace exists while it
    holds at least one vector.
    """

    async def upsert(self, records: Sequence[VectorRecord], namespace: str) -> int:
        """Insert or overwrite records by id; returns how many were written.

        Raises ``InvalidRequestError`` for a vector whose dimension differs from the index's.
        """
        ...

    async def query(
        self,
        vector: Sequence[float],
        *,
        top_k: int,
        namespace: str,
        filter: MetadataFilter | None = None,
        include_values: bool = False,
    ) -> list[QueryMatch]:
        """The ``top_k`` records most similar to ``vector``, best first, ties by id.

        Raises ``NamespaceNotFoundError`` when the namespace holds no vectors.
        """
        ...

    async def delete(
        self,
        *,
        namespace: str,
        ids: Sequence[str] | None = None,
        filter: MetadataFilter | None = None,
        delete_all: bool = False,
    ) -> None:
        """Delete by ids, by filter, or everything in the namespace (exactly one of them).

        Deleting what does not exist is not an error.
        """
        ...

    async def stats(self) -> IndexStats:
        """Dimension and per-namespace record counts."""
        ...
