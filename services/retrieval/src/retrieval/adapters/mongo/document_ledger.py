"""The ingestion ledger in MongoDB: one document per (namespace, document id), leases included.

A lease is a sub-document ``{owner, host, pid, until}``. Claiming writes each document once,
conditional on the lease it replaces (none, expired, ours or taken over), so of two racing
claims one wins. A record is keyed ``<namespace>/<document_id>`` (lookups by ``_id`` stay
fast on every server). Lease times come from the writer's clock, so replicas' clocks must
agree to within a small part of the lease time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from pymongo import ASCENDING, InsertOne, UpdateOne
from pymongo.errors import BulkWriteError

from retrieval.adapters.mongo.chunk_repository import (
    create_namespace_index,
    delete_in_pages,
    mongo_errors,
)
from retrieval.domain.ledger import RELEASED, WAITER_S, DocumentRecord, DocumentState, Lease
from retrieval.errors import DocumentBusyError
from retrieval.ports.document_ledger import Claim

DUPLICATE_KEY = 11000
RECORD_FIELDS = (
    "state",
    "fingerprint",
    "chunk_ids",
    "previous",
    "previous_fingerprint",
    "stale",
    "provenance",
    "previous_provenance",
)
PAGE = 500
SOURCE_URI = "provenance.source.uri"
"""Where a record keeps the path or URL its version was read from."""


def key(namespace: str, document_id: str) -> str:
    """The record's ``_id``: exact-match lookups on ``_id`` stay fast on every server."""
    return f"{namespace}/{document_id}"


def to_record(document: dict[str, Any]) -> DocumentRecord:
    return DocumentRecord.model_validate(
        {
            key: document[key]
            for key in ("namespace", "document_id", *RECORD_FIELDS)
            if key in document
        }
    )


def to_lease(held: dict[str, Any]) -> Lease:
    return Lease(owner=held["owner"], host=held["host"], pid=held["pid"])


def aware(moment: datetime) -> datetime:
    """A time read back from the server, which stores UTC without its zone."""
    return moment.replace(tzinfo=UTC)


def waiters(document: dict[str, Any], skipped: Collection[str], now: datetime) -> list[dict]:
    """The document's line of waiters still asking, in order, but for ``skipped`` owners."""
    return [
        waiter
        for waiter in document.get("queue", [])
        if waiter["owner"] not in skipped and aware(waiter["until"]) >= now
    ]


def ahead_of(line: list[dict], owner: str) -> list[dict]:
    """The waiters before ``owner`` in line: all of them if it has no place yet."""
    places = [n for n, waiter in enumerate(line) if waiter["owner"] == owner]
    return line[: places[0]] if places else line


class MongoDocumentLedger:
    def __init__(self, collection: Any, lease_s: float = 60.0) -> None:
        self._collection = collection
        self._lease_s = lease_s
        self._waiter_time = timedelta(seconds=min(WAITER_S, lease_s))

    async def ensure_indexes(self) -> None:
        with mongo_errors("create_index"):
            await create_namespace_index(self._collection, "document_id", unique=True)
            await self._collection.create_index(
                [("lease.host", ASCENDING)], sparse=True, name="lease_host"
            )
            await self._collection.create_index([("state", ASCENDING)], name="state")
            await self._collection.create_index(
                [("namespace", ASCENDING), (SOURCE_URI, ASCENDING)], name="source"
            )

    def _lease_document(self, lease: Lease) -> dict[str, Any]:
        until = datetime.now(UTC) + timedelta(seconds=self._lease_s)
        return {"owner": lease.owner, "host": lease.host, "pid": lease.pid, "until": until}

    async def claim(
        self,
        namespace: str,
        document_ids: Sequence[str],
        lease: Lease,
        *,
        taking_over: Collection[str] = (),
    ) -> Claim:
        wanted = list(dict.fromkeys(document_ids))
        if not wanted:
            return Claim()
        mine = {lease.owner, *taking_over}
        now = datetime.now(UTC)
        with mongo_errors("claim"):
            found = await self._find(namespace, wanted)
            operations: list[Any] = []
            for document_id in wanted:
                document = found.get(document_id)
                if document is None:
                    operations.append(
                        InsertOne(
                            {
                                "_id": key(namespace, document_id),
                                "namespace": namespace,
                                "document_id": document_id,
                                "lease": self._lease_document(lease),
                            }
                        )
                    )
                else:
                    operations.append(self._claim_or_wait(document, lease, mine, now))
            try:
                await self._collection.bulk_write(operations, ordered=False)
            except BulkWriteError as error:
                errors = error.details["writeErrors"]
                if any(e["code"] != DUPLICATE_KEY for e in errors):
                    raise
            found = await self._find(namespace, wanted)
        claim = Claim()
        for document_id in wanted:
            document = found.get(document_id)
            held = None if document is None else document.get("lease")
            if held is not None and held["owner"] == lease.owner:
                claim.records[document_id] = to_record(document)
            elif held is not None:
                claim.held[document_id] = to_lease(held)
            else:
                line = [] if document is None else waiters(document, (), now)
                ahead = ahead_of(line, lease.owner)
                claim.held[document_id] = to_lease(ahead[0]) if ahead else RELEASED
        return claim

    def _claim_or_wait(
        self, document: dict[str, Any], lease: Lease, mine: set[str], now: datetime
    ) -> UpdateOne:
        """Take the lease if it is held by an owner taken over, or free and no other waiter
        is ahead, else join the line (or keep the place in it). Both write on the line's
        ``turn`` as read, so a write made on a line that changed meanwhile does nothing."""
        line = waiters(document, mine - {lease.owner}, now)
        place = len(ahead_of(line, lease.owner))
        others = [waiter for waiter in line if waiter["owner"] != lease.owner]
        held = document.get("lease")
        free = held is None or held["owner"] in mine or aware(held["until"]) < now
        expected: dict[str, Any] = {"_id": document["_id"], "turn": document.get("turn")}
        if (held is not None and held["owner"] in mine) or (free and place == 0):
            expected.update({"lease": None} if held is None else {"lease.owner": held["owner"]})
            taken = {"lease": self._lease_document(lease), "queue": others}
            return UpdateOne(expected, {"$set": taken, "$inc": {"turn": 1}})
        waiting = {**self._lease_document(lease), "until": now + self._waiter_time}
        if place == len(line):
            return UpdateOne(expected, {"$set": {"queue": [*line, waiting]}, "$inc": {"turn": 1}})
        line[place] = waiting
        return UpdateOne(expected, {"$set": {"queue": line}})

    async def save(self, records: Sequence[DocumentRecord], lease: Lease) -> None:
        """One update statement for every record (the server commits each statement on its
        own): each record ours is replaced by its entry in the statement, found by its key
        (a later record of the same document wins)."""
        if not records:
            return
        held = self._lease_document(lease)
        entries = {
            key(record.namespace, record.document_id): {
                **record.model_dump(mode="json", include=set(RECORD_FIELDS)),
                "lease": held,
            }
            for record in records
        }
        keys = list(entries)
        entry = {
            "$arrayElemAt": [
                {"$literal": list(entries.values())},
                {"$indexOfArray": [{"$literal": keys}, "$_id"]},
            ]
        }
        with mongo_errors("save"):
            result = await self._collection.update_many(
                {"_id": {"$in": keys}, "lease.owner": lease.owner},
                [{"$replaceWith": {"$mergeObjects": ["$$ROOT", entry]}}],
            )
            if result.matched_count != len(keys):
                lost = await self._not_ours(records, lease)
                raise DocumentBusyError.of(records[0].namespace, lost)

    async def _not_ours(self, records: Sequence[DocumentRecord], lease: Lease) -> str:
        found = await self._find(records[0].namespace, [record.document_id for record in records])
        for record in records:
            document = found.get(record.document_id)
            if document is None or (document.get("lease") or {}).get("owner") != lease.owner:
                return record.document_id
        return records[0].document_id

    async def release(self, namespace: str, document_ids: Sequence[str], lease: Lease) -> None:
        if not document_ids:
            return
        with mongo_errors("release"):
            found = await self._find(namespace, list(document_ids))
            ours = [
                document
                for document in found.values()
                if (document.get("lease") or {}).get("owner") == lease.owner
            ]
            if not ours:
                return
            empty = [d["_id"] for d in ours if to_record(d).is_empty]
            if empty:
                await self._collection.delete_many(
                    {"_id": {"$in": empty}, "lease.owner": lease.owner, "queue.0": {"$exists": 0}}
                )
            await self._collection.update_many(
                {"_id": {"$in": [d["_id"] for d in ours]}, "lease.owner": lease.owner},
                {"$unset": {"lease": ""}},
            )

    async def get_many(
        self, namespace: str, document_ids: Sequence[str]
    ) -> dict[str, DocumentRecord]:
        if not document_ids:
            return {}
        with mongo_errors("find"):
            found = await self._find(namespace, list(document_ids))
        return {
            document_id: to_record(document)
            for document_id, document in found.items()
            if document.get("state") is not None
        }

    async def with_sources(self, namespace: str, sources: Collection[str]) -> list[DocumentRecord]:
        if not sources:
            return []
        query = {
            "namespace": namespace,
            SOURCE_URI: {"$in": sorted(sources)},
            "state": {"$ne": None},
        }
        with mongo_errors("find"):
            found = await self._collection.find(query).sort("document_id", ASCENDING).to_list(None)
        return [to_record(document) for document in found]

    async def unsettled(self, host: str) -> list[tuple[DocumentRecord, Lease | None]]:
        now = datetime.now(UTC)
        with mongo_errors("find"):
            leased = await self._collection.find({"lease.host": host}).to_list(None)
            pending = await self._collection.find(
                {
                    "state": DocumentState.PENDING.value,
                    "lease.host": {"$ne": host},
                    "$or": [{"lease": None}, {"lease.until": {"$lt": now}}],
                }
            ).to_list(None)
        found = [(to_record(d), to_lease(d["lease"])) for d in leased]
        found += [(to_record(d), None) for d in pending]
        return sorted(found, key=lambda item: (item[0].namespace, item[0].document_id))

    async def list_records(self, namespace: str) -> AsyncIterator[list[DocumentRecord]]:
        after = ""
        while True:
            query = {"namespace": namespace, "document_id": {"$gt": after}}
            with mongo_errors("find"):
                page = (
                    await self._collection.find(query, {"_id": False})
                    .sort("document_id", ASCENDING)
                    .limit(PAGE)
                    .to_list(None)
                )
            if not page:
                return
            yield [to_record(document) for document in page]
            after = page[-1]["document_id"]

    async def namespaces(self) -> list[str]:
        with mongo_errors("distinct"):
            return sorted(await self._collection.distinct("namespace"))

    async def delete_namespace(self, namespace: str) -> int:
        """A page of records at a time, so a namespace of any size is deleted, and an
        interrupted deletion is finished by running it again."""
        return await delete_in_pages(self._collection, {"namespace": namespace}, PAGE)

    async def _find(self, namespace: str, document_ids: list[str]) -> dict[str, dict[str, Any]]:
        keys = [key(namespace, document_id) for document_id in document_ids]
        found = await self._collection.find({"_id": {"$in": keys}}).to_list(None)
        return {document["document_id"]: document for document in found}
