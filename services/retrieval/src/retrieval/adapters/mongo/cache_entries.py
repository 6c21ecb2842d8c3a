"""The entries of a cache in MongoDB, shared by every replica: one document per key,
``{_id: key, used_at: date, ...}``, with a TTL index on ``used_at``.

Reads ask for at most ``READ_BATCH`` keys per round trip and move the ``used_at`` of the
entries found forward when it is older than ``refresh_after``; writes send at most
``WRITE_BATCH`` entries per bulk. Every round trip runs under its own deadline
(``round_trip_s``): a slow cache is given up on, never waited for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from pymongo import ASCENDING, ReplaceOne

from retrieval.adapters.mongo.chunk_repository import mongo_errors, round_trip
from retrieval.batching import slices

READ_BATCH = 1000
WRITE_BATCH = 500
TTL_INDEX = "used_at_ttl"
SECONDS_PER_DAY = 86_400


def utc_now() -> datetime:
    return datetime.now(UTC)


def as_utc(moment: datetime) -> datetime:
    """PyMongo returns naive UTC dates unless the client was made ``tz_aware``."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


async def ensure_ttl_index(collection: Any, ttl_seconds: int) -> None:
    """The TTL index on ``used_at``; a changed ``ttl_seconds`` updates it in place
    (``collMod``)."""
    with mongo_errors("create_index"):
        existing = (await collection.index_information()).get(TTL_INDEX)
        if existing is None:
            await collection.create_index(
                [("used_at", ASCENDING)], name=TTL_INDEX, expireAfterSeconds=ttl_seconds
            )
        elif existing.get("expireAfterSeconds") != ttl_seconds:
            await collection.database.command(
                "collMod",
                collection.name,
                index={"name": TTL_INDEX, "expireAfterSeconds": ttl_seconds},
            )


async def read_entries(
    collection: Any,
    keys: Sequence[str],
    *,
    now: datetime,
    refresh_after: timedelta,
    round_trip_s: float,
) -> list[dict[str, Any]]:
    """The documents stored under ``keys``; those last used ``refresh_after`` or more before
    ``now`` are marked used ``now``."""
    found: list[dict[str, Any]] = []
    for batch in slices(list(dict.fromkeys(keys)), READ_BATCH):
        with round_trip("find", round_trip_s):
            found += await collection.find({"_id": {"$in": batch}}).to_list(None)
    stale = [d["_id"] for d in found if now - as_utc(d["used_at"]) >= refresh_after]
    for batch in slices(stale, READ_BATCH):
        with round_trip("update", round_trip_s):
            await collection.update_many({"_id": {"$in": batch}}, {"$max": {"used_at": now}})
    return found


async def write_entries(
    collection: Any, entries: Mapping[str, dict[str, Any]], *, now: datetime, round_trip_s: float
) -> None:
    """Store or replace each entry's fields under its key, used ``now``."""
    operations = [
        ReplaceOne({"_id": key}, {**fields, "used_at": now}, upsert=True)
        for key, fields in entries.items()
    ]
    for batch in slices(operations, WRITE_BATCH):
        with round_trip("upsert", round_trip_s):
            await collection.bulk_write(batch, ordered=False)


class MongoCacheEntries:
    """A cache's collection, with its expiry and deadlines; the caches store their entries'
    fields through ``_read`` and ``_write``."""

    def __init__(
        self,
        collection: Any,
        *,
        ttl_days: int,
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

    async def _read(self, keys: Sequence[str]) -> list[dict[str, Any]]:
        return await read_entries(
            self._collection,
            keys,
            now=self._clock(),
            refresh_after=self._refresh_after,
            round_trip_s=self._round_trip_s,
        )

    async def _write(self, entries: Mapping[str, dict[str, Any]]) -> None:
        await write_entries(
            self._collection, entries, now=self._clock(), round_trip_s=self._round_trip_s
        )
