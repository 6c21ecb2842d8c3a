"""The MongoDB embedding cache against a real wire-protocol server: batching, recency, expiry."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from pymongo import AsyncMongoClient, monitoring

from retrieval.adapters.mongo.cache_entries import TTL_INDEX
from retrieval.adapters.mongo.embedding_cache import MongoEmbeddingCache
from retrieval.errors import BackendTimeoutError

DIMENSION = 4
TIMED_OUT_APP = "embedding-cache-timeout"


class CommandSizes(monitoring.CommandListener):
    """How many keys each find asks for and how many entries each update writes."""

    def __init__(self) -> None:
        self.sizes: list[tuple[str, int]] = []

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        if event.command_name == "find":
            self.sizes.append(("find", len(event.command["filter"]["_id"]["$in"])))
        elif event.command_name == "update":
            self.sizes.append(("update", len(event.command["updates"])))

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass


class ManualClock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def vector(seed: int) -> np.ndarray:
    return np.full(DIMENSION, seed, dtype=np.float32)


@pytest.fixture
def collection(mongo_client: AsyncMongoClient):
    return mongo_client[f"cache_{uuid.uuid4().hex[:12]}"]["embeddings"]


@pytest.fixture
async def listened(mongo_uri: str) -> AsyncIterator[tuple[AsyncMongoClient, CommandSizes]]:
    sizes = CommandSizes()
    client: AsyncMongoClient = AsyncMongoClient(mongo_uri, event_listeners=[sizes])
    yield client, sizes
    await client.close()


async def test_reads_and_writes_are_batched(listened) -> None:
    client, sizes = listened
    cache = MongoEmbeddingCache(client[f"cache_{uuid.uuid4().hex[:12]}"]["embeddings"])
    await cache.put_many({f"k{n}": vector(n) for n in range(1205)})
    found = await cache.get_many([f"k{n}" for n in range(1205)])
    assert len(found) == 1205
    assert sizes.sizes == [
        ("update", 500), ("update", 500), ("update", 205), ("find", 1000), ("find", 205)
    ]  # fmt: skip


async def test_an_entry_is_float32_bytes_under_its_key(collection) -> None:
    cache = MongoEmbeddingCache(collection)
    await cache.put_many({"model@4:passage:abc": np.array([1.5, -2, 0, 0.25], np.float64)})
    stored = await collection.find_one({})
    assert stored["_id"] == "model@4:passage:abc"
    assert np.array_equal(np.frombuffer(stored["vector"], "<f4"), [1.5, -2, 0, 0.25])
    assert isinstance(stored["used_at"], datetime)


async def test_a_hit_refreshes_recency_at_most_once_a_day(collection) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    clock = ManualClock(start)
    cache = MongoEmbeddingCache(collection, clock=clock)
    await cache.put_many({"a": vector(1)})

    async def used_at() -> datetime:
        return (await collection.find_one({"_id": "a"}))["used_at"].replace(tzinfo=UTC)

    clock.now = start + timedelta(hours=23)
    await cache.get_many(["a"])
    assert await used_at() == start
    clock.now = start + timedelta(days=2)
    await cache.get_many(["a"])
    assert await used_at() == start + timedelta(days=2)


async def test_ttl_index_follows_the_configured_days(collection) -> None:
    await MongoEmbeddingCache(collection).ensure_indexes()
    assert (await collection.index_information())[TTL_INDEX]["expireAfterSeconds"] == 30 * 86_400
    for _ in range(2):
        await MongoEmbeddingCache(collection, ttl_days=7).ensure_indexes()
    index = (await collection.index_information())[TTL_INDEX]
    assert index["key"] == [("used_at", 1)]
    assert index["expireAfterSeconds"] == 7 * 86_400


async def test_the_server_expires_entries_unused_for_the_ttl(
    mongo_client: AsyncMongoClient, collection
) -> None:
    long_ago = ManualClock(datetime.now(UTC) - timedelta(days=31))
    await MongoEmbeddingCache(collection, clock=long_ago).put_many({"old": vector(1)})
    cache = MongoEmbeddingCache(collection)
    await cache.ensure_indexes()
    await cache.put_many({"fresh": vector(2)})
    await mongo_client.admin.command("secantusAdmin.pruneTtl")
    assert set(await cache.get_many(["old", "fresh"])) == {"fresh"}


async def test_a_round_trip_that_hangs_times_out(mongo_uri: str, mongo_client) -> None:
    client: AsyncMongoClient = AsyncMongoClient(mongo_uri, appname=TIMED_OUT_APP)
    cache = MongoEmbeddingCache(client[f"cache_{uuid.uuid4().hex[:12]}"]["e"], timeout_ms=500)
    await mongo_client.admin.command(
        "configureFailPoint",
        "failCommand",
        mode="alwaysOn",
        data={
            "failCommands": ["find"],
            "blockConnection": True,
            "blockTimeMS": 3000,
            "appName": TIMED_OUT_APP,
        },
    )
    try:
        with pytest.raises(BackendTimeoutError):
            await cache.get_many(["a"])
    finally:
        await mongo_client.admin.command("configureFailPoint", "failCommand", mode="off")
        await client.close()
