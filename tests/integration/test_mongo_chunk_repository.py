"""The MongoDB repository against a real wire-protocol server: round trips and indexes."""

from __future__ import annotations

import uuid

import pytest
from pymongo import AsyncMongoClient, monitoring

from retrieval.adapters.mongo_chunk_repository import MongoChunkRepository
from retrieval.domain.models import RagChunk
from retrieval.errors import BackendUnavailableError

NS = "integration"


class CommandLog(monitoring.CommandListener):
    def __init__(self) -> None:
        self.commands: list[str] = []

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        self.commands.append(event.command_name)

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass


def chunk(n: int) -> RagChunk:
    return RagChunk(
        chunk_id=f"doc#{n:04d}",
        document_id="doc",
        namespace=NS,
        title="Frost",
        domain="weather_patterns",
        position=n,
        content=f"chunk {n}",
    )


async def test_get_many_is_one_round_trip(mongo_uri: str) -> None:
    log = CommandLog()
    client: AsyncMongoClient = AsyncMongoClient(mongo_uri, event_listeners=[log])
    try:
        repository = MongoChunkRepository(client[f"rt_{uuid.uuid4().hex[:8]}"]["chunks"])
        await repository.upsert_many([chunk(n) for n in range(50)])
        log.commands.clear()
        found = await repository.get_many([f"doc#{n:04d}" for n in range(0, 50, 2)], NS)
        assert len(found) == 25
        assert log.commands == ["find"]
    finally:
        await client.close()


async def test_indexes_are_created_at_start(mongo_repository: MongoChunkRepository) -> None:
    indexes = await mongo_repository._collection.index_information()
    assert indexes["namespace_chunk_id"]["unique"] is True
    assert indexes["namespace_chunk_id"]["key"] == [("namespace", 1), ("chunk_id", 1)]
    assert indexes["namespace_document_id"]["key"] == [("namespace", 1), ("document_id", 1)]


async def test_ensuring_indexes_twice_is_harmless(mongo_repository: MongoChunkRepository) -> None:
    await mongo_repository.ensure_indexes()
    assert await mongo_repository.count() == 0


async def test_unreachable_server_is_a_typed_error() -> None:
    client: AsyncMongoClient = AsyncMongoClient(
        "mongodb://127.0.0.1:1/?directConnection=true", serverSelectionTimeoutMS=200
    )
    try:
        with pytest.raises(BackendUnavailableError):
            await MongoChunkRepository(client.db.chunks).get_many(["a"], NS)
    finally:
        await client.close()
