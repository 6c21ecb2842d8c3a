"""Namespace generations in MongoDB: one document per namespace, ``{_id: namespace, generation}``.

Lookups are by ``_id`` alone, which every server answers from its index. ``advance`` is one
``findAndModify`` with ``$inc`` and upsert, so concurrent advances each count once; on a
namespace never advanced, MongoDB (4.2 and later) retries the upsert that loses the insert
race itself, because the filter is an equality on the unique ``_id``.

Both run on the primary, the advance acknowledged by a majority and the read at ``majority``
read concern: a read issued after an advance was acknowledged sees it, on every replica of
the service, and an acknowledged advance survives a failover. (A primary cut off from its
set answers with what it has until it steps down, within the election timeout.)
Every round trip runs under its own deadline (``timeout_ms``), errors translated to
``retrieval.errors``.
"""

from __future__ import annotations

from typing import Any

from pymongo import ReturnDocument
from pymongo.read_concern import ReadConcern
from pymongo.read_preferences import Primary
from pymongo.write_concern import WriteConcern

from retrieval.adapters.mongo_chunk_repository import round_trip

GENERATION = {"_id": False, "generation": True}


class MongoNamespaceGenerations:
    def __init__(self, collection: Any, *, timeout_ms: int = 10_000) -> None:
        self._collection = collection.with_options(
            read_preference=Primary(),
            read_concern=ReadConcern("majority"),
            write_concern=WriteConcern("majority"),
        )
        self._timeout = timeout_ms / 1000

    async def current(self, namespace: str) -> int:
        with round_trip("find", self._timeout):
            document = await self._collection.find_one({"_id": namespace}, GENERATION)
        return 0 if document is None else document["generation"]

    async def advance(self, namespace: str) -> int:
        with round_trip("find_and_modify", self._timeout):
            document = await self._collection.find_one_and_update(
                {"_id": namespace},
                {"$inc": {"generation": 1}},
                projection=GENERATION,
                upsert=True,
                return_document=ReturnDocument.AFTER,
            )
        return document["generation"]
