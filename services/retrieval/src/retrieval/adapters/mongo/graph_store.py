"""The knowledge graph in MongoDB: one document per chunk, its entities in two array fields.

``{namespace, chunk_id, about: [entity], mentions: [entity], metadata, relations: [{source,
target, type, description}]}``, with multikey indexes on ``(namespace, about)`` and
``(namespace, mentions)``: an entity's chunks are one index range per edge kind (a record
written before relations were kept reads as having none). Production's MongoDB holds it
beside the chunk texts, so every replica reads the same graph (docs/graph.md says why not a
graph database).
Filters are evaluated on the records read (``retrieval.domain.filters``): a lookup that
names more than an index's fields is scanned by some MongoDB-protocol servers (SecantusDB).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

from pymongo import ASCENDING, DeleteMany, ReplaceOne

from retrieval.adapters.mongo.chunk_repository import (
    create_namespace_index,
    delete_in_pages,
    mongo_errors,
)
from retrieval.adapters.mongo.document_ledger import key
from retrieval.batching import slices
from retrieval.domain.filters import evaluate, parse_delete_selector, parse_filter
from retrieval.domain.graph import GraphRecord, Relation
from retrieval.errors import InvalidRequestError
from retrieval.ports.graph_store import ABOUT_READ
from retrieval.ports.vector_index import LIST_PAGE_SIZE, MetadataFilter

WRITE_BATCH = 500
SCANNED = 500
"""The most records one entity's lookup reads per edge kind: an entity named that often
weighs next to nothing in a graph search, and its reads stay bounded."""


def to_document(record: GraphRecord, namespace: str) -> dict[str, Any]:
    return {
        "_id": key(namespace, record.id),
        "namespace": namespace,
        "chunk_id": record.id,
        "about": list(record.about),
        "mentions": list(record.mentions),
        "metadata": record.metadata,
        "relations": [relation.model_dump() for relation in record.relations],
        "version": record.version,
    }


def to_record(document: dict[str, Any]) -> GraphRecord:
    """The record a stored document holds, built without validation: ``upsert`` stores only
    validated records, and a retrieval's second hop reads a hundred or more (8 µs each when
    validated, 3 µs built)."""
    return GraphRecord.model_construct(
        id=document["chunk_id"],
        about=tuple(document["about"]),
        mentions=tuple(document["mentions"]),
        metadata=document["metadata"],
        relations=tuple(
            Relation.model_construct(**relation) for relation in document.get("relations", ())
        ),
        version=document.get("version", ""),
    )


class MongoGraphStore:
    """``read_batch``: the most ids ``get_many`` asks for in one find (None: all at once); the
    embedded server's ``READ_BATCH``, for which a long ``$in`` costs the square of its
    length."""

    def __init__(self, collection: Any, read_batch: int | None = None) -> None:
        self._collection = collection
        self._read_batch = read_batch

    async def ensure_indexes(self) -> None:
        with mongo_errors("create_index"):
            await create_namespace_index(self._collection, "chunk_id", unique=True)
            for field in ("about", "mentions"):
                await create_namespace_index(self._collection, field)

    async def upsert(self, records: Sequence[GraphRecord], namespace: str) -> int:
        for batch in slices(records, WRITE_BATCH):
            operations = [
                ReplaceOne({"_id": key(namespace, r.id)}, to_document(r, namespace), upsert=True)
                for r in batch
            ]
            with mongo_errors("upsert"):
                await self._collection.bulk_write(operations, ordered=False)
        return len(records)

    async def get_many(self, ids: Sequence[str], namespace: str) -> dict[str, GraphRecord]:
        keys = [key(namespace, record_id) for record_id in dict.fromkeys(ids)]
        found: dict[str, GraphRecord] = {}
        for batch in slices(keys, self._read_batch or max(len(keys), 1)):
            with mongo_errors("find"):
                documents = await self._collection.find({"_id": {"$in": batch}}).to_list(None)
            found.update((document["chunk_id"], to_record(document)) for document in documents)
        return found

    async def linked(
        self,
        entities: Sequence[str],
        *,
        namespace: str,
        per_entity: int,
        filter: MetadataFilter | None = None,
    ) -> dict[str, list[GraphRecord]]:
        if per_entity < 1:
            raise InvalidRequestError(f"per_entity must be at least 1, got {per_entity}")
        expression = parse_filter(filter)
        wanted = list(dict.fromkeys(entities))
        found = await asyncio.gather(*(self._linked(entity, namespace) for entity in wanted))
        return {
            entity: [r for r in records if evaluate(expression, r.metadata)][:per_entity]
            for entity, records in zip(wanted, found, strict=True)
        }

    async def _linked(self, entity: str, namespace: str) -> list[GraphRecord]:
        """The records about ``entity``, then those mentioning it, each by id; two index
        lookups, at most ``SCANNED`` records each."""
        with mongo_errors("find"):
            about, mentioning = [
                await self._collection.find({"namespace": namespace, field: entity})
                .limit(SCANNED)
                .to_list(None)
                for field in ("about", "mentions")
            ]
        first = sorted((to_record(d) for d in about), key=lambda record: record.id)
        ids = {record.id for record in first}
        then = sorted(
            (to_record(d) for d in mentioning if d["chunk_id"] not in ids),
            key=lambda record: record.id,
        )
        return first + then

    async def about(
        self,
        entities: Sequence[str],
        *,
        namespace: str,
        filter: MetadataFilter | None = None,
    ) -> list[GraphRecord]:
        expression = parse_filter(filter)
        query = {"namespace": namespace, "about": {"$in": list(dict.fromkeys(entities))}}
        with mongo_errors("find"):
            found = await self._collection.find(query).limit(ABOUT_READ).to_list(None)
        records = sorted((to_record(d) for d in found), key=lambda record: record.id)
        return [record for record in records if evaluate(expression, record.metadata)]

    async def delete(
        self, *, namespace: str, ids: Sequence[str] | None = None, delete_all: bool = False
    ) -> None:
        parse_delete_selector(ids, None, delete_all)
        if delete_all:
            await delete_in_pages(self._collection, {"namespace": namespace}, WRITE_BATCH)
            return
        operations = [
            DeleteMany({"_id": {"$in": [key(namespace, i) for i in batch]}})
            for batch in slices(list(dict.fromkeys(ids or ())), WRITE_BATCH)
        ]
        if operations:
            with mongo_errors("delete"):
                await self._collection.bulk_write(operations, ordered=True)

    def list_ids(self, namespace: str, *, prefix: str | None = None) -> AsyncIterator[list[str]]:
        return self._ids({"namespace": namespace}, prefix)

    def outdated_ids(
        self, namespace: str, version: str, *, prefix: str | None = None
    ) -> AsyncIterator[list[str]]:
        return self._ids({"namespace": namespace, "version": {"$ne": version}}, prefix)

    async def _ids(self, query: dict[str, Any], prefix: str | None) -> AsyncIterator[list[str]]:
        """The ``chunk_id`` of the records ``query`` selects, in pages of ascending ids."""
        ids: dict[str, str] = {"$gte": prefix or ""}
        if prefix:
            ids["$lt"] = prefix + chr(0x10FFFF)
        while True:
            with mongo_errors("find"):
                found = (
                    await self._collection.find(
                        {**query, "chunk_id": ids}, {"_id": False, "chunk_id": True}
                    )
                    .sort("chunk_id", ASCENDING)
                    .limit(LIST_PAGE_SIZE)
                    .to_list(None)
                )
            if found:
                yield [document["chunk_id"] for document in found]
            if len(found) < LIST_PAGE_SIZE:
                return
            ids = {k: v for k, v in ids.items() if k != "$gte"} | {"$gt": found[-1]["chunk_id"]}

    async def count(self, namespace: str) -> int:
        with mongo_errors("count"):
            return await self._collection.count_documents({"namespace": namespace})

    async def entity_count(self, namespace: str) -> int:
        pipeline = [
            {"$match": {"namespace": namespace}},
            {"$project": {"entities": {"$concatArrays": ["$about", "$mentions"]}}},
            {"$unwind": "$entities"},
            {"$group": {"_id": "$entities"}},
            {"$count": "entities"},
        ]
        with mongo_errors("aggregate"):
            found = await (await self._collection.aggregate(pipeline)).to_list(None)
        return found[0]["entities"] if found else 0
