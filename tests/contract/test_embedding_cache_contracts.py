import uuid
from datetime import timedelta

import pytest
from motor.motor_asyncio import AsyncIOMotorClient
from pymongo import AsyncMongoClient

from retrieval.adapters.mongo.embedding_cache import MongoEmbeddingCache
from retrieval_testkit import InMemoryEmbeddingCache
from retrieval_testkit.contracts.embedding_cache import EmbeddingCacheContract, TickingClock


def mongo_cache(collection) -> MongoEmbeddingCache:
    return MongoEmbeddingCache(collection, refresh_after=timedelta(0), clock=TickingClock())


class TestInMemoryEmbeddingCache(EmbeddingCacheContract):
    @pytest.fixture
    def cache(self) -> InMemoryEmbeddingCache:
        return InMemoryEmbeddingCache()


class TestMongoEmbeddingCacheWithPyMongoAsync(EmbeddingCacheContract):
    @pytest.fixture
    async def cache(self, mongo_client: AsyncMongoClient) -> MongoEmbeddingCache:
        cache = mongo_cache(mongo_client[f"test_{uuid.uuid4().hex[:12]}"]["embeddings"])
        await cache.ensure_indexes()
        return cache


class TestMongoEmbeddingCacheWithMotor(EmbeddingCacheContract):
    @pytest.fixture
    async def cache(self, mongo_uri: str):
        client = AsyncIOMotorClient(mongo_uri, serverSelectionTimeoutMS=5000)
        cache = mongo_cache(client[f"test_{uuid.uuid4().hex[:12]}"]["embeddings"])
        await cache.ensure_indexes()
        yield cache
        client.close()
