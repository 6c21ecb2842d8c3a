"""Namespace generations in MongoDB: one document per namespace,
``{_id: namespace, generation, index_lsns: {index: lsn}}`` (an index only once an advance
reported an LSN of it). A document written when one LSN was kept for the namespace
(``index_lsn``) reads as one with none, so time decides until its next advance.

Lookups are by ``_id`` alone, which every server answers from its index. ``advance`` makes
sure the document exists, then runs one ``findAndModify`` with ``$inc`` and, given an LSN,
``$max`` on each index's LSN (no upsert), so concurrent advances each count once and no LSN
goes back: an
upserting increment that lost an insert race was, on SecantusDB, applied yet answered with no
document.

Both run on the primary, the advance acknowledged by a majority once journaled (``j``, like
the client's other writes: SecantusDB, the embedded server, syncs its journal only when a
write asks, so without it a SIGKILL of the server loses the last advances) and the read at
``majority`` read concern: a read issued after an advance was acknowledged sees it, on every
replica of the service, and an acknowledged advance survives a failover. (A primary cut off
from its set answers with what it has until it steps down, within the election timeout.)
Every round trip runs under its own deadline (``timeout_ms``), errors translated to
``retrieval.errors``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError
from pymongo.read_concern import ReadConcern
from pymongo.read_preferences import Primary
from pymongo.write_concern import WriteConcern

from retrieval.adapters.mongo.chunk_repository import round_trip
from retrieval.errors import BackendError
from retrieval.ports.namespace_generations import NO_LSNS, Generation

GENERATION = {"_id": False, "generation": True, "index_lsns": True}


class MongoNamespaceGenerations:
    def __init__(self, collection: Any, *, timeout_ms: int = 10_000) -> None:
        self._collection = collection.with_options(
            read_preference=Primary(),
            read_concern=ReadConcern("majority"),
            write_concern=WriteConcern("majority", j=True),
        )
        self._timeout = timeout_ms / 1000

    async def current(self, namespace: str) -> Generation:
        with round_trip("find", self._timeout):
            document = await self._collection.find_one({"_id": namespace}, GENERATION)
        if document is None:
            return Generation(0)
        return Generation(document["generation"], document.get("index_lsns", NO_LSNS))

    async def advance(self, namespace: str, index_lsns: Mapping[str, int] = NO_LSNS) -> int:
        """Creates the namespace's document if it is missing (``$setOnInsert``, so racing
        creators leave one document at 0), then increments it: an increment never races
        an insert, so each advance counts exactly once and returns its own value."""
        with round_trip("update", self._timeout), contextlib.suppress(DuplicateKeyError):
            await self._collection.update_one(
                {"_id": namespace}, {"$setOnInsert": {"generation": 0}}, upsert=True
            )
        highest = {f"index_lsns.{index}": lsn for index, lsn in index_lsns.items()}
        with round_trip("find_and_modify", self._timeout):
            document = await self._collection.find_one_and_update(
                {"_id": namespace},
                {"$inc": {"generation": 1}} | ({"$max": highest} if highest else {}),
                projection=GENERATION,
                return_document=ReturnDocument.AFTER,
            )
        if document is None:
            raise BackendError(f"the generation of {namespace!r} vanished while advancing")
        return document["generation"]
