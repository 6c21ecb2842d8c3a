"""Every GraphStore honours one contract: the in-memory double and MongoDB."""

from __future__ import annotations

import uuid

import pytest
from pymongo import AsyncMongoClient

from retrieval.adapters.mongo.graph_store import MongoGraphStore
from retrieval_testkit import InMemoryGraphStore
from retrieval_testkit.contracts.graph_store import KISS, NS, GraphStoreContract


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


class TestMongoGraphStoreReadInBatches(TestMongoGraphStore):
    """As the embedded server is read: a few ids a find."""

    @pytest.fixture
    async def store(self, collection):
        store = MongoGraphStore(collection, read_batch=2)
        await store.ensure_indexes()
        return store
