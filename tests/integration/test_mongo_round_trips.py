"""Every command the MongoDB client sends counts as a round trip of the stage that sent it."""

from __future__ import annotations

import uuid

from pymongo import AsyncMongoClient

from retrieval.adapters.mongo.chunk_repository import MongoChunkRepository
from retrieval.adapters.mongo.round_trips import MongoRoundTrips
from retrieval.service.timing import StageClock


async def test_each_command_counts_for_the_stage_that_sent_it(mongo_uri: str) -> None:
    client: AsyncMongoClient = AsyncMongoClient(
        mongo_uri, serverSelectionTimeoutMS=5000, event_listeners=[MongoRoundTrips()]
    )
    try:
        chunks = MongoChunkRepository(client[f"test_{uuid.uuid4().hex[:12]}"]["chunks"])
        await chunks.ensure_indexes()
        clock = StageClock()
        with clock.stage("fetch"):
            await chunks.get_many(["a#0", "b#0"], "ns")
        with clock.stage("diversify"):
            pass
        await chunks.count("ns")
    finally:
        await client.close()
    assert clock.round_trips == {"fetch": 1}
