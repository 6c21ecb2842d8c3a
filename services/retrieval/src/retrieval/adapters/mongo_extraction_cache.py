"""Knowledge extractions cached in MongoDB, shared by every replica.

One document per entry: ``{_id: key, extraction: {names, relations}, used_at: date}``
(``retrieval.adapters.mongo_cache_entries``: batched round trips under their own deadline,
recency moved forward at most once a day). A TTL index on ``used_at`` lets the server delete
the entries unused for ``ttl_days``. An entry that no longer reads as an ``Extraction`` (one
written by another version of this service) is a miss, replaced by the next write.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from pydantic import ValidationError

from retrieval.adapters.mongo_cache_entries import (
    SECONDS_PER_DAY,
    ensure_ttl_index,
    read_entries,
    utc_now,
    write_entries,
)
from retrieval.domain.graph import Extraction


def readable(document: dict[str, Any]) -> Extraction | None:
    try:
        return Extraction.model_validate(document.get("extraction"))
    except ValidationError:
        return None


class MongoExtractionCache:
    def __init__(
        self,
        collection: Any,
        *,
        ttl_days: int = 90,
        timeout_ms: int = 10_000,
        refresh_after: timedelta = timedelta(days=1),
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._collection = collection
        self._ttl_seconds = ttl_days * SECONDS_PER_DAY
        self._round_trip_s = timeout_ms / 1000
        self._refresh_after = refresh_after
        self._clock = clock

    async def ensure_indexes(self) -> None:
        await ensure_ttl_index(self._collection, self._ttl_seconds)

    async def get_many(self, keys: Sequence[str]) -> dict[str, Extraction]:
        documents = await read_entries(
            self._collection,
            keys,
            now=self._clock(),
            refresh_after=self._refresh_after,
            round_trip_s=self._round_trip_s,
        )
        found = {document["_id"]: readable(document) for document in documents}
        return {key: extraction for key, extraction in found.items() if extraction is not None}

    async def put_many(self, entries: Mapping[str, Extraction]) -> None:
        await write_entries(
            self._collection,
            {key: {"extraction": e.model_dump(mode="json")} for key, e in entries.items()},
            now=self._clock(),
            round_trip_s=self._round_trip_s,
        )
