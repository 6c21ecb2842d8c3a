"""Namespace generations on a real wire-protocol server: what is stored, what each call asks
of the server, and failures as the service's errors."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from pymongo import AsyncMongoClient, monitoring

from retrieval.adapters.mongo.namespace_generations import MongoNamespaceGenerations
from retrieval.errors import BackendTimeoutError

TIMED_OUT_APP = "generations-timeout"


class Commands(monitoring.CommandListener):
    def __init__(self) -> None:
        self.started_commands: list[dict] = []

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        if event.command_name in {"update", "find", "findAndModify"}:
            self.started_commands.append(dict(event.command))

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass


@pytest.fixture
def collection(mongo_client: AsyncMongoClient):
    return mongo_client[f"generations_{uuid.uuid4().hex[:12]}"]["namespace_generations"]


@pytest.fixture
async def listened(mongo_uri: str) -> AsyncIterator[tuple[AsyncMongoClient, Commands]]:
    commands = Commands()
    client: AsyncMongoClient = AsyncMongoClient(mongo_uri, event_listeners=[commands])
    yield client, commands
    await client.close()


async def test_one_document_per_namespace_keyed_by_name(collection) -> None:
    generations = MongoNamespaceGenerations(collection)
    await generations.advance("tea")
    await generations.advance("tea")
    await generations.advance("coffee", {"dense": 4, "sparse": 2})
    stored = await collection.find({}).sort("_id", 1).to_list(None)
    assert stored == [
        {"_id": "coffee", "generation": 1, "index_lsns": {"dense": 4, "sparse": 2}},
        {"_id": "tea", "generation": 2},
    ]


async def test_reads_by_id_at_majority_and_advances_acknowledged_by_a_majority(
    listened,
) -> None:
    client, commands = listened
    generations = MongoNamespaceGenerations(
        client[f"generations_{uuid.uuid4().hex[:12]}"]["namespace_generations"]
    )
    await generations.advance("tea")
    await generations.current("tea")
    create, advance, read = commands.started_commands
    [created] = create["updates"]
    assert created["q"] == {"_id": "tea"}
    assert created["u"] == {"$setOnInsert": {"generation": 0}}
    assert created["upsert"] is True
    assert advance["query"] == {"_id": "tea"}
    assert advance["update"] == {"$inc": {"generation": 1}}
    assert not advance.get("upsert"), "an increment never races an insert"
    assert create["writeConcern"]["w"] == advance["writeConcern"]["w"] == "majority"
    assert read["filter"] == {"_id": "tea"}
    assert read["readConcern"] == {"level": "majority"}


async def test_a_read_that_hangs_times_out(mongo_uri: str, mongo_client) -> None:
    client: AsyncMongoClient = AsyncMongoClient(mongo_uri, appname=TIMED_OUT_APP)
    generations = MongoNamespaceGenerations(
        client[f"generations_{uuid.uuid4().hex[:12]}"]["namespace_generations"], timeout_ms=300
    )
    await mongo_client.admin.command(
        "configureFailPoint",
        "failCommand",
        mode="alwaysOn",
        data={
            "failCommands": ["find", "findAndModify"],
            "blockConnection": True,
            "blockTimeMS": 3000,
            "appName": TIMED_OUT_APP,
        },
    )
    try:
        with pytest.raises(BackendTimeoutError):
            await generations.current("tea")
        with pytest.raises(BackendTimeoutError):
            await generations.advance("tea")
    finally:
        await mongo_client.admin.command("configureFailPoint", "failCommand", mode="off")
        await client.close()
