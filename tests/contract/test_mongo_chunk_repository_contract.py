import pytest
from motor.motor_asyncio import AsyncIOMotorClient

from retrieval.adapters.mongo_chunk_repository import MongoChunkRepository
from retrieval_testkit.contracts import ChunkRepositoryContract


class TestMongoChunkRepositoryWithPyMongoAsync(ChunkRepositoryContract):
    @pytest.fixture
    def repository(self, mongo_repository: MongoChunkRepository) -> MongoChunkRepository:
        return mongo_repository


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
