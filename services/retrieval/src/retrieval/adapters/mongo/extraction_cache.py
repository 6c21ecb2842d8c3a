"""Knowledge extractions cached in MongoDB, shared by every replica.

One document per entry: ``{_id: key, extraction: {names, relations}, used_at: date}``
(``retrieval.adapters.mongo.cache_entries``: batched round trips under their own deadline,
recency moved forward at most once a day). A TTL index on ``used_at`` lets the server delete
the entries unused for ``ttl_days``. An entry that no longer reads as an ``Extraction`` (one
written by another version of this service) is a miss, replaced by the next write.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from retrieval.adapters.mongo.cache_entries import MongoCacheEntries
from retrieval.domain.graph import Extraction


def readable(document: dict[str, Any]) -> Extraction | None:
    try:
        return Extraction.model_validate(document.get("extraction"))
    except ValidationError:
        return None


class MongoExtractionCache(MongoCacheEntries):
    def __init__(self, collection: Any, *, ttl_days: int = 90, **options: Any) -> None:
        super().__init__(collection, ttl_days=ttl_days, **options)

    async def get_many(self, keys: Sequence[str]) -> dict[str, Extraction]:
        found = {document["_id"]: readable(document) for document in await self._read(keys)}
        return {key: extraction for key, extraction in found.items() if extraction is not None}

    async def put_many(self, entries: Mapping[str, Extraction]) -> None:
        await self._write(
            {key: {"extraction": e.model_dump(mode="json")} for key, e in entries.items()}
        )
