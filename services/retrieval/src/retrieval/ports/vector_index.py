from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any, Protocol

from retrieval.domain.vectors import IndexStats, QueryMatch, VectorRecord

MetadataFilter = Mapping[str, Any]

LIST_PAGE_SIZE = 100
"""The most ids one page of ``VectorIndex.list_ids`` holds (Pinecone's cap)."""

MAX_FETCH_IDS = 1000
"""The most ids one ``VectorIndex.fetch`` takes (Pinecone's cap)."""


def id_pages(ids: Iterable[str], prefix: str | None) -> list[list[str]]:
    """``list_ids`` of an index that holds its ids in memory: sorted, filtered, paged."""
    kept = sorted(i for i in ids if i.startswith(prefix or ""))
    return [kept[start : start + LIST_PAGE_SIZE] for start in range(0, len(kept), LIST_PAGE_SIZE)]


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
        include_metadata: bool = True,
    ) -> list[QueryMatch]:
        """The ``top_k`` records most similar to ``vector``, best first, ties by id; with
        ``include_metadata=False`` every match's metadata is empty (less to build and send).
        A match's metadata may be the index's own (an embedded index does not copy a hundred
        dicts a query): read it, or copy it before changing it. ``fetch`` returns copies.

        Raises ``NamespaceNotFoundError`` when the namespace holds no vectors.
        """
        ...

    async def fetch(self, ids: Sequence[str], namespace: str) -> dict[str, VectorRecord]:
        """The stored records with these ids, values and metadata included; ids (or a
        namespace) that do not exist are absent. Any number of ids: an adapter whose backend
        caps a request sends ``MAX_FETCH_IDS`` at a time."""
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

    def list_ids(self, namespace: str, *, prefix: str | None = None) -> AsyncIterator[list[str]]:
        """Every record id of the namespace (those starting with ``prefix`` if given).

        Ids come in ascending order (code point order, which for Pinecone's ASCII ids is
        its bitwise order), in non-empty pages of at most ``LIST_PAGE_SIZE``; an unknown
        namespace yields nothing. Records written or deleted while the listing runs may or
        may not appear; every record present throughout appears exactly once.
        """
        ...
