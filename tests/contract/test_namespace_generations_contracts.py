"""Every NamespaceGenerations honours one contract: the in-memory double and MongoDB through
PyMongo async and Motor."""

from __future__ import annotations

import uuid

import pytest
from motor.motor_asyncio import AsyncIOMotorClient
from pymongo import AsyncMongoClient

from retrieval.adapters.mongo.namespace_generations import MongoNamespaceGenerations
from retrieval_testkit import InMemoryNamespaceGenerations
from retrieval_testkit.contracts import NamespaceGenerationsContract


def database() -> str:
    return f"test_{uuid.uuid4().hex[:12]}"


class TestInMemoryNamespaceGenerations(NamespaceGenerationsContract):
    @pytest.fixture
    def generations(self) -> InMemoryNamespaceGenerations:
        return InMemoryNamespaceGenerations()


class TestMongoNamespaceGenerationsWithPyMongoAsync(NamespaceGenerationsContract):
    @pytest.fixture
    def generations(self, mongo_client: AsyncMongoClient) -> MongoNamespaceGenerations:
        return MongoNamespaceGenerations(mongo_client[database()]["namespace_generations"])


class TestMongoNamespaceGenerationsWithMotor(NamespaceGenerationsContract):
    @pytest.fixture
    async def generations(self, mongo_uri: str):
        client = AsyncIOMotorClient(mongo_uri, serverSelectionTimeoutMS=5000)
        yield MongoNamespaceGenerations(client[database()]["namespace_generations"])
        client.close()
