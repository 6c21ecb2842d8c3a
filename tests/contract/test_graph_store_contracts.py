"""Every GraphStore honours one contract: the in-memory double and MongoDB."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from pymongo import AsyncMongoClient

from retrieval.adapters.mongo.graph_store import WRITE_BATCH, MongoGraphStore
from retrieval_testkit import InMemoryGraphStore
from retrieval_testkit.contracts.graph_store import KISS, NS, GraphStoreContract, record


class DeletesNoted:
    """A collection that notes the filter of every ``delete_many`` it passes on."""

    def __init__(self, collection: Any) -> None:
        self._collection = collection
        self.deletes: list[dict[str, Any]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._collection, name)

    async def delete_many(self, query: dict[str, Any], **options: Any) -> Any:
        self.deletes.append(query)
        return await self._collection.delete_many(query, **options)


class TestInMemoryGraphStore(GraphStoreContract):
    @pytest.fixture
    def store(self):
        return InMemoryGraphStore()


class TestMongoGraphStore(GraphStoreContract):
    @pytest.fixture
    def collection(self, mongo_client: AsyncMongoClient):
        return mongo_client[f"test_{uuid.uuid4().hex[:12]}"]["graph"]

    @pytest.fixture
    async def store(self, collection):
        store = MongoGraphStore(collection)
        await store.ensure_indexes()
        return store

    async def test_a_record_written_before_relations_has_none(self, store, collection) -> None:
        await store.upsert([KISS], NS)
        await collection.update_many({}, {"$unset": {"relations": ""}})
        assert await store.about(["kiss and tell"], namespace=NS) == [KISS]


async def test_a_namespace_is_deleted_a_page_at_a_time(mongo_client: AsyncMongoClient) -> None:
    """One delete over a whole large namespace outlasted the client's deadline on the busy
    embedded server; each delete now names at most a page of records."""
    collection = DeletesNoted(mongo_client[f"test_{uuid.uuid4().hex[:12]}"]["graph"])
    store = MongoGraphStore(collection)
    await store.ensure_indexes()
    records = [record(f"doc#{n}", f"topic {n}", "tea") for n in range(2 * WRITE_BATCH + 1)]
    await store.upsert(records, NS)
    await store.upsert([KISS], "kept")

    await store.delete(namespace=NS, delete_all=True)

    assert await store.get_many([r.id for r in records], NS) == {}
    assert await store.get_many([KISS.id], "kept") == {KISS.id: KISS}
    assert len(collection.deletes) == 3
    assert all(len(query["_id"]["$in"]) <= WRITE_BATCH for query in collection.deletes)


class TestMongoGraphStoreReadInBatches(TestMongoGraphStore):
    """As the embedded server is read: a few ids a find."""

    @pytest.fixture
    async def store(self, collection):
        store = MongoGraphStore(collection, read_batch=2)
        await store.ensure_indexes()
        return store
