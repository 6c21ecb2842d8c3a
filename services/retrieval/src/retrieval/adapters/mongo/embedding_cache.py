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
replaces the client's ``timeoutMS``): a slow cache is given up on, never waited for
(``retrieval.adapters.mongo.cache_entries``, shared with the extraction cache).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pymongo import ASCENDING

from retrieval.adapters.mongo.cache_entries import READ_BATCH, MongoCacheEntries
from retrieval.adapters.mongo.chunk_repository import round_trip
from retrieval.ports.embedder import Vector

STORED = np.dtype("<f4")


class MongoEmbeddingCache(MongoCacheEntries):
    def __init__(self, collection: Any, *, ttl_days: int = 30, **options: Any) -> None:
        super().__init__(collection, ttl_days=ttl_days, **options)

    async def get_many(self, keys: Sequence[str]) -> dict[str, Vector]:
        return {
            document["_id"]: np.frombuffer(document["vector"], STORED).astype(np.float32)
            for document in await self._read(keys)
        }

    async def put_many(self, entries: Mapping[str, Vector]) -> None:
        await self._write(
            {key: {"vector": np.asarray(v, STORED).tobytes()} for key, v in entries.items()}
        )

    async def evict(self, max_entries: int) -> int:
        removed = 0
        while (excess := await self._count() - max_entries) > 0:
            with round_trip("find", self._round_trip_s):
                oldest = (
                    await self._collection.find({}, {"_id": True})
                    .sort("used_at", ASCENDING)
                    .limit(min(excess, READ_BATCH))
                    .to_list(None)
                )
            if not oldest:
                break
            with round_trip("delete", self._round_trip_s):
                result = await self._collection.delete_many(
                    {"_id": {"$in": [document["_id"] for document in oldest]}}
                )
            removed += result.deleted_count
        return removed

    async def _count(self) -> int:
        with round_trip("count", self._round_trip_s):
            return await self._collection.estimated_document_count()
