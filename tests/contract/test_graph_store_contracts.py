"""Every GraphStore honours one contract: the in-memory double and MongoDB."""

from __future__ import annotations

import uuid

import pytest
from pymongo import AsyncMongoClient

from retrieval.adapters.mongo_graph_store import MongoGraphStore
from retrieval_testkit import InMemoryGraphStore
from retrieval_testkit.contracts.graph_store import GraphStoreContract


class TestInMemoryGraphStore(GraphStoreContract):
    @pytest.fixture
    def store(self):
        return InMemoryGraphStore()


class TestMongoGraphStore(GraphStoreContract):
    @pytest.fixture
    async def store(self, mongo_client: AsyncMongoClient):
        store = MongoGraphStore(mongo_client[f"test_{uuid.uuid4().hex[:12]}"]["graph"])
        await store.ensure_indexes()
        return store
