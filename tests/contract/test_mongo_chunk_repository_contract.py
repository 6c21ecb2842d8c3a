import uuid

import pytest
from motor.motor_asyncio import AsyncIOMotorClient
from pymongo import AsyncMongoClient

from retrieval.adapters.mongo.chunk_repository import MongoChunkRepository
from retrieval_testkit.contracts import ChunkRepositoryContract


class TestMongoChunkRepositoryWithPyMongoAsync(ChunkRepositoryContract):
    @pytest.fixture
    def repository(self, mongo_repository: MongoChunkRepository) -> MongoChunkRepository:
        return mongo_repository


class TestMongoChunkRepositoryReadingInBatches(ChunkRepositoryContract):
    """As the embedded server is read: a few ids per find."""

    @pytest.fixture
    async def repository(self, mongo_client: AsyncMongoClient) -> MongoChunkRepository:
        repository = MongoChunkRepository(
            mongo_client[f"batched_{uuid.uuid4().hex[:12]}"]["chunks"], read_batch=2
        )
        await repository.ensure_indexes()
        return repository


class TestMongoChunkRepositoryWithMotor(ChunkRepositoryContract):
    @pytest.fixture
    async def repository(self, mongo_uri: str):
        client = AsyncIOMotorClient(mongo_uri, serverSelectionTimeoutMS=5000)
        repository = MongoChunkRepository(client["motor_contract"]["chunks"])
        await repository.delete_namespace("contract")
        await repository.delete_namespace("other")
        await repository.ensure_indexes()
        yield repository
        client.close()
