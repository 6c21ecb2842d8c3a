"""The MongoDB repository against a real wire-protocol server: round trips, indexes, batches."""

from __future__ import annotations

import asyncio
import gc
import uuid
import warnings
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import pytest
from motor.motor_asyncio import AsyncIOMotorClient
from pymongo import AsyncMongoClient, monitoring

from retrieval.adapters.mongo.chunk_repository import MongoChunkRepository
from retrieval.domain.models import RagChunk
from retrieval.errors import BackendTimeoutError, BackendUnavailableError, InvalidRequestError

NS = "integration"
BATCH = 50
TAIL = 21
TOTAL = 2 * BATCH + TAIL
CLIENT_TIMEOUT_MS = 10_000


class CommandLog(monitoring.CommandListener):
    """Every command the client starts, as sent."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    @property
    def commands(self) -> list[str]:
        return [name for name, _ in self.sent]

    def bodies(self, name: str) -> list[dict[str, Any]]:
        return [body for sent, body in self.sent if sent == name]

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        self.sent.append((event.command_name, dict(event.command)))

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass


@asynccontextmanager
async def pymongo_async(uri: str, log: CommandLog) -> AsyncIterator[Any]:
    client: AsyncMongoClient = AsyncMongoClient(
        uri, event_listeners=[log], timeoutMS=CLIENT_TIMEOUT_MS
    )
    try:
        yield client
    finally:
        await client.close()


@asynccontextmanager
async def motor(uri: str, log: CommandLog) -> AsyncIterator[Any]:
    client = AsyncIOMotorClient(uri, event_listeners=[log], timeoutMS=CLIENT_TIMEOUT_MS)
    try:
        yield client
    finally:
        client.close()


Driver = Callable[[str, CommandLog], AbstractAsyncContextManager[Any]]


@pytest.fixture(params=[pymongo_async, motor], ids=["pymongo-async", "motor"])
async def logged(
    request: pytest.FixtureRequest, mongo_uri: str
) -> AsyncIterator[tuple[MongoChunkRepository, CommandLog]]:
    """A repository writing in batches of ``BATCH`` (not the default) on a client with a 10 s
    operation timeout."""
    log = CommandLog()
    driver: Driver = request.param
    async with driver(mongo_uri, log) as client:
        collection = client[f"batches_{uuid.uuid4().hex[:8]}"]["chunks"]
        repository = MongoChunkRepository(collection, write_batch=BATCH)
        await repository.ensure_indexes()
        log.sent.clear()
        yield repository, log


def chunk(n: int, document_id: str = "doc", namespace: str = NS) -> RagChunk:
    return RagChunk(
        chunk_id=f"{document_id}#{n:04d}",
        document_id=document_id,
        namespace=namespace,
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
        log.sent.clear()
        found = await repository.get_many([f"doc#{n:04d}" for n in range(0, 50, 2)], NS)
        assert len(found) == 25
        assert log.commands == ["find"]
    finally:
        await client.close()


async def test_get_many_with_a_read_batch_asks_for_even_batches_one_after_another(
    mongo_uri: str,
) -> None:
    log = CommandLog()
    client: AsyncMongoClient = AsyncMongoClient(mongo_uri, event_listeners=[log])
    try:
        repository = MongoChunkRepository(
            client[f"rb_{uuid.uuid4().hex[:8]}"]["chunks"], read_batch=10
        )
        stored = {c.chunk_id: c for c in [chunk(n) for n in range(50)]}
        await repository.upsert_many(list(stored.values()))
        log.sent.clear()
        asked = [f"doc#{n:04d}" for n in range(0, 50, 2)] + ["doc#9999"]
        found = await repository.get_many(asked, NS)
        assert found == {chunk_id: stored[chunk_id] for chunk_id in asked[:-1]}
        finds = log.bodies("find")
        assert [len(find["filter"]["chunk_id"]["$in"]) for find in finds] == [9, 9, 8]
        assert [i for find in finds for i in find["filter"]["chunk_id"]["$in"]] == asked
        assert log.commands == ["find"] * 3
    finally:
        await client.close()


async def test_a_read_batch_holds_at_least_one_id(mongo_client: AsyncMongoClient) -> None:
    with pytest.raises(ValueError, match="read_batch"):
        MongoChunkRepository(mongo_client.db.chunks, read_batch=0)


async def test_indexes_are_created_at_start(mongo_repository: MongoChunkRepository) -> None:
    indexes = await mongo_repository._collection.index_information()
    assert indexes["namespace_chunk_id"]["unique"] is True
    assert indexes["namespace_chunk_id"]["key"] == [("namespace", 1), ("chunk_id", 1)]
    assert indexes["namespace_document_id"]["key"] == [("namespace", 1), ("document_id", 1)]


async def test_ensuring_indexes_twice_is_harmless(mongo_repository: MongoChunkRepository) -> None:
    await mongo_repository.ensure_indexes()
    assert await mongo_repository.count() == 0


async def test_a_document_bson_cannot_encode_is_bad_input(
    mongo_repository: MongoChunkRepository,
) -> None:
    unencodable = chunk(1).model_copy(update={"metadata": {"a\x00b": 1}})
    with pytest.raises(InvalidRequestError, match=r"NUL"):
        await mongo_repository.upsert_many([chunk(0), unencodable])
    assert await mongo_repository.get_many([unencodable.chunk_id], NS) == {}


async def test_unreachable_server_is_a_typed_error() -> None:
    client: AsyncMongoClient = AsyncMongoClient(
        "mongodb://127.0.0.1:1/?directConnection=true", serverSelectionTimeoutMS=200
    )
    try:
        with pytest.raises(BackendUnavailableError):
            await MongoChunkRepository(client.db.chunks).get_many(["a"], NS)
        # PyMongo leaves the socket of a connection attempt that close() cancels unclosed;
        # let the monitor's attempt end, and collect what is left here, not in a later test.
        await asyncio.sleep(0.2)
    finally:
        await client.close()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            await asyncio.sleep(0.05)
            gc.collect()


async def test_a_write_larger_than_a_batch_goes_in_batches_under_their_own_deadline(
    logged: tuple[MongoChunkRepository, CommandLog],
) -> None:
    repository, log = logged
    assert await repository.upsert_many([chunk(n) for n in range(TOTAL)]) == TOTAL
    updates = log.bodies("update")
    assert [len(update["updates"]) for update in updates] == [BATCH, BATCH, TAIL]
    assert all(update["maxTimeMS"] > CLIENT_TIMEOUT_MS for update in updates)
    assert await repository.count(NS) == TOTAL


async def test_deleting_many_chunks_goes_in_batches(
    logged: tuple[MongoChunkRepository, CommandLog],
) -> None:
    repository, log = logged
    await repository.upsert_many([chunk(n) for n in range(TOTAL)])
    log.sent.clear()
    ids = [f"doc#{n:04d}" for n in range(TOTAL)]
    assert await repository.delete_chunks([*ids, *ids[:5], "missing"], NS) == TOTAL
    deletes = log.bodies("delete")
    assert [len(delete["deletes"]) for delete in deletes] == [BATCH, BATCH, TAIL + 1]
    assert all(delete["maxTimeMS"] > CLIENT_TIMEOUT_MS for delete in deletes)
    assert await repository.count(NS) == 0


@pytest.mark.parametrize(
    ("scope", "sizes", "small_left"),
    [("namespace", [BATCH, BATCH, TAIL + 3], 0), ("document", [BATCH, BATCH, TAIL], 3)],
)
async def test_deleting_more_than_a_batch_finds_and_deletes_batch_by_batch(
    logged: tuple[MongoChunkRepository, CommandLog],
    scope: str,
    sizes: list[int],
    small_left: int,
) -> None:
    repository, log = logged
    await repository.upsert_many(
        [chunk(n, "big") for n in range(TOTAL)]
        + [chunk(n, "small") for n in range(3)]
        + [chunk(0, "big", namespace="other")]
    )
    log.sent.clear()
    if scope == "namespace":
        deleted = await repository.delete_namespace(NS)
    else:
        deleted = await repository.delete_document("big", NS)
    assert deleted == sum(sizes)
    assert [find["limit"] for find in log.bodies("find")] == [BATCH] * 4
    deletes = log.bodies("delete")
    assert [len(delete["deletes"]) for delete in deletes] == sizes
    assert all(delete["maxTimeMS"] > CLIENT_TIMEOUT_MS for delete in deletes)
    assert len(await repository.chunk_ids("small", NS)) == small_left
    assert await repository.count("other") == 1


async def test_a_namespace_delete_stopped_by_a_timeout_finishes_when_run_again(
    mongo_uri: str,
) -> None:
    app = f"resume-{uuid.uuid4().hex[:8]}"
    client: AsyncMongoClient = AsyncMongoClient(mongo_uri, appname=app)
    repository = MongoChunkRepository(
        client[f"resume_{uuid.uuid4().hex[:8]}"]["chunks"], write_batch=BATCH
    )
    second_delete_times_out = {
        "configureFailPoint": "failCommand",
        "mode": {"skip": 1, "times": 1},
        "data": {"failCommands": ["delete"], "errorCode": 50, "appName": app},
    }
    try:
        await repository.ensure_indexes()
        await repository.upsert_many([chunk(n) for n in range(TOTAL)])
        await client.admin.command(second_delete_times_out)
        with pytest.raises(BackendTimeoutError, match="MongoDB delete timed out"):
            await repository.delete_namespace(NS)
        assert await repository.count(NS) == TOTAL - BATCH
        assert await repository.delete_namespace(NS) == TOTAL - BATCH
        assert await repository.count(NS) == 0
    finally:
        await client.admin.command({"configureFailPoint": "failCommand", "mode": "off"})
        await client.close()


async def test_a_batch_past_its_deadline_is_a_timeout(mongo_client: AsyncMongoClient) -> None:
    repository = MongoChunkRepository(
        mongo_client[f"deadline_{uuid.uuid4().hex[:8]}"]["chunks"], bulk_timeout_ms=1
    )
    await repository.ensure_indexes()
    with pytest.raises(BackendTimeoutError, match="MongoDB upsert timed out"):
        await repository.upsert_many([chunk(n) for n in range(BATCH)])


async def test_listing_reads_each_page_after_the_last_id_of_the_one_before(
    logged: tuple[MongoChunkRepository, CommandLog],
) -> None:
    repository, log = logged
    await repository.upsert_many([chunk(n) for n in range(TOTAL)])
    log.sent.clear()
    listed = [page async for page in repository.list_chunks(NS)]
    assert [len(page) for page in listed] == [BATCH, BATCH, TAIL]
    finds = log.bodies("find")
    assert [find["limit"] for find in finds] == [BATCH] * 3
    assert [find["filter"].get("chunk_id") for find in finds] == [
        None,
        {"$gt": f"doc#{BATCH - 1:04d}"},
        {"$gt": f"doc#{2 * BATCH - 1:04d}"},
    ]
    assert "getMore" not in log.commands


def test_batches_must_hold_something(mongo_client: AsyncMongoClient) -> None:
    with pytest.raises(ValueError, match="write_batch"):
        MongoChunkRepository(mongo_client.db.chunks, write_batch=0)
