from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol

from retrieval.domain.graph import GraphRecord
from retrieval.ports.vector_index import MetadataFilter

ABOUT_READ = 1000
"""The most records one ``about`` lookup reads."""


class GraphStore(Protocol):
    """The entities each chunk is about and mentions (``retrieval.domain.graph``), partitioned
    by namespace, under the chunks' ids, so ``list_ids`` pages merge with the other stores'
    listings. Filters use the vector index's language (``retrieval.domain.filters``); a
    malformed filter raises ``InvalidFilterError``. Entities are compared by ``name_key``.
    """

    async def upsert(self, records: Sequence[GraphRecord], namespace: str) -> int:
        """Insert or overwrite records by id; returns how many were written."""
        ...

    async def get_many(self, ids: Sequence[str], namespace: str) -> dict[str, GraphRecord]:
        """The records of these chunk ids, by id, in one round trip; an id without one is
        absent."""
        ...

    async def linked(
        self,
        entities: Sequence[str],
        *,
        namespace: str,
        per_entity: int,
        filter: MetadataFilter | None = None,
    ) -> dict[str, list[GraphRecord]]:
        """For each entity, up to ``per_entity`` records that pass ``filter`` and are about it
        or mention it: those about it first, then by id. An entity no record names maps to
        ``[]``. Raises ``InvalidRequestError`` for a ``per_entity`` below 1."""
        ...

    async def about(
        self,
        entities: Sequence[str],
        *,
        namespace: str,
        filter: MetadataFilter | None = None,
    ) -> list[GraphRecord]:
        """The records about any of ``entities`` that pass ``filter``, by id, in one round
        trip: the chunks of the documents those entities title. At most ``ABOUT_READ``
        records are read (those past it, which ones unspecified, are left out), so a lookup
        of an entity whole books are about stays bounded."""
        ...

    async def delete(
        self, *, namespace: str, ids: Sequence[str] | None = None, delete_all: bool = False
    ) -> None:
        """As ``KeywordIndex.delete``."""
        ...

    def list_ids(self, namespace: str, *, prefix: str | None = None) -> AsyncIterator[list[str]]:
        """As ``KeywordIndex.list_ids``."""
        ...

    def outdated_ids(
        self, namespace: str, version: str, *, prefix: str | None = None
    ) -> AsyncIterator[list[str]]:
        """The ids of the namespace's records whose ``version`` is not ``version`` (made by
        another extractor or record format), as ``list_ids`` lists them."""
        ...

    async def count(self, namespace: str) -> int:
        """Records in the namespace (0 for one never written)."""
        ...

    async def entity_count(self, namespace: str) -> int:
        """Distinct entities the namespace's records are about or mention."""
        ...
