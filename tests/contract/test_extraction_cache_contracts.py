"""Every ExtractionCache honours one contract: the in-memory double and MongoDB."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from pymongo import AsyncMongoClient

from retrieval.adapters.mongo.extraction_cache import MongoExtractionCache
from retrieval_testkit import InMemoryExtractionCache
from retrieval_testkit.contracts.extraction_cache import KISS, ExtractionCacheContract


class TestInMemoryExtractionCache(ExtractionCacheContract):
    @pytest.fixture
    def cache(self) -> InMemoryExtractionCache:
        return InMemoryExtractionCache()


class TestMongoExtractionCache(ExtractionCacheContract):
    @pytest.fixture
    def collection(self, mongo_client: AsyncMongoClient):
        return mongo_client[f"test_{uuid.uuid4().hex[:12]}"]["extractions"]

    @pytest.fixture
    async def cache(self, collection) -> MongoExtractionCache:
        cache = MongoExtractionCache(collection, refresh_after=timedelta(0))
        await cache.ensure_indexes()
        return cache

    async def test_an_entry_that_no_longer_reads_is_a_miss(
        self, cache: MongoExtractionCache, collection
    ) -> None:
        await cache.put_many({"kiss": KISS})
        await collection.update_one({"_id": "kiss"}, {"$set": {"extraction.names": 7}})
        assert await cache.get_many(["kiss"]) == {}
        await cache.put_many({"kiss": KISS})
        assert await cache.get_many(["kiss"]) == {"kiss": KISS}
