"""Embeddings cached in MongoDB, shared by every replica of the service.

One document per entry: ``{_id: key, vector: float32 little-endian bytes, used_at: date}``.

- Recency: a hit moves ``used_at`` forward only when it is older than ``refresh_after``
  (a day by default), so lookups write at most once per entry per day and recency is
  known to that resolution.
- Expiry: a TTL index on ``used_at`` lets the server delete entries unused for ``ttl_days``.
  A changed ``ttl_days`` updates the index in place (``collMod``). SecantusDB, the embedded
  server, runs TTL expiry like mongod does: a sweeper thread every 60 s (measured with
  secantusdb 0.7.0b3, in-process and ``secantusd-py``: an expired entry was gone after 58 s).
- Size: ``evict(max_entries)`` deletes the least recently used entries beyond the cap, at
  most 1000 per round trip. When replicas evict at the same moment, each may remove up to
  one such batch more than needed.

Reads ask for at most 1000 keys per round trip and writes send at most 500 entries per bulk;
every round trip runs under its own deadline (``pymongo.timeout``, ``timeout_ms``, which
replaces the client's ``timeoutMS``): a slow cache is given up on, never waited for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
from pymongo import ASCENDING, ReplaceOne

from retrieval.adapters.mongo_chunk_repository import mongo_errors, round_trip
from retrieval.batching import slices
from retrieval.ports.embedder import Vector

READ_BATCH = 1000
WRITE_BATCH = 500
TTL_INDEX = "used_at_ttl"
STORED = np.dtype("<f4")
SECONDS_PER_DAY = 86_400


def utc_now() -> datetime:
    return datetime.now(UTC)


def as_utc(moment: datetime) -> datetime:
    """PyMongo returns naive UTC dates unless the client was made ``tz_aware``."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


class MongoEmbeddingCache:
    def __init__(
        self,
        collection: Any,
        *,
        ttl_days: int = 30,
        timeout_ms: int = 10_000,
        refresh_after: timedelta = timedelta(days=1),
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._collection = collection
        self._ttl_seconds = ttl_days * SECONDS_PER_DAY
        self._timeout = timeout_ms / 1000
        self._refresh_after = refresh_after
        self._clock = clock

    async def ensure_indexes(self) -> None:
        with mongo_errors("create_index"):
            existing = (await self._collection.index_information()).get(TTL_INDEX)
            if existing is None:
                await self._collection.create_index(
                    [("used_at", ASCENDING)], name=TTL_INDEX, expireAfterSeconds=self._ttl_seconds
                )
            elif existing.get("expireAfterSeconds") != self._ttl_seconds:
                await self._collection.database.command(
                    "collMod",
                    self._collection.name,
                    index={"name": TTL_INDEX, "expireAfterSeconds": self._ttl_seconds},
                )

    async def get_many(self, keys: Sequence[str]) -> dict[str, Vector]:
        now = self._clock()
        found: dict[str, Vector] = {}
        stale: list[str] = []
        for batch in slices(list(dict.fromkeys(keys)), READ_BATCH):
            with round_trip("find", self._timeout):
                documents = await self._collection.find({"_id": {"$in": batch}}).to_list(None)
            for document in documents:
                key = document["_id"]
                found[key] = np.frombuffer(document["vector"], STORED).astype(np.float32)
                if now - as_utc(document["used_at"]) >= self._refresh_after:
                    stale.append(key)
        for batch in slices(stale, READ_BATCH):
            with round_trip("update", self._timeout):
                await self._collection.update_many(
                    {"_id": {"$in": batch}}, {"$max": {"used_at": now}}
                )
        return found

    async def put_many(self, entries: Mapping[str, Vector]) -> None:
        now = self._clock()
        operations = [
            ReplaceOne(
                {"_id": key},
                {"vector": np.asarray(vector, STORED).tobytes(), "used_at": now},
                upsert=True,
            )
            for key, vector in entries.items()
        ]
        for batch in slices(operations, WRITE_BATCH):
            with round_trip("upsert", self._timeout):
                await self._collection.bulk_write(batch, ordered=False)

    async def evict(self, max_entries: int) -> int:
        removed = 0
        while (excess := await self._count() - max_entries) > 0:
            with round_trip("find", self._timeout):
                oldest = (
                    await self._collection.find({}, {"_id": True})
                    .sort("used_at", ASCENDING)
                    .limit(min(excess, READ_BATCH))
                    .to_list(None)
                )
            if not oldest:
                break
            with round_trip("delete", self._timeout):
                result = await self._collection.delete_many(
                    {"_id": {"$in": [document["_id"] for document in oldest]}}
                )
            removed += result.deleted_count
        return removed

    async def _count(self) -> int:
        with round_trip("count", self._timeout):
            return await self._collection.estimated_document_count()
