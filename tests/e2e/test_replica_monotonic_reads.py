"""Two ``retrieval serve`` replicas over one MongoDB-protocol server and the Pinecone stand-ins,
whose writes show later (3 s) than the replicas' freshness window (1 s) assumes: the index's
LSNs, not the window, say when a namespace settled. After an update or a delete through one
replica, the other, which served and cached the old text, never serves it again (monotonic
reads), and shows the write throughout."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from retrieval.grpc import RetrievalClient
from retrieval_testkit.replica_set import replica_set
from retrieval_testkit.versioned_document import OTHER, QUESTION, shows, version

NS = "monotonic"
LAG_S = 3.0
WINDOW_S = 1.0
POLL_S = 0.1


async def contents(client: RetrievalClient) -> list[str]:
    result = await client.retrieve(QUESTION, top_k=5, namespace=NS)
    return [match.content for match in result.matches]


async def old_texts_served(client: RetrievalClient, old: str, for_s: float) -> list[float]:
    """The seconds, from now, at which ``client`` served ``old`` while polled for ``for_s``."""
    started = time.monotonic()
    served: list[float] = []
    while (elapsed := time.monotonic() - started) < for_s:
        if shows(await contents(client), old):
            served.append(round(elapsed, 1))
        await asyncio.sleep(POLL_S)
    return served


async def test_after_an_update_and_a_delete_the_other_replica_never_goes_back(
    tmp_path: Path, mongo_uri: str
) -> None:
    async with replica_set(tmp_path, mongo_uri, 2, LAG_S, freshness_s=WINDOW_S) as replicas:
        writer, reader = replicas.clients
        await writer.ingest_documents([version("ONE"), OTHER], namespace=NS)
        await asyncio.sleep(LAG_S + WINDOW_S)
        for _ in range(3):
            assert shows(await contents(reader), "ONE")

        await writer.ingest_documents([version("TWO")], namespace=NS)
        assert await old_texts_served(reader, "ONE", LAG_S + 2 * WINDOW_S) == []
        assert shows(await contents(reader), "TWO")

        await writer.delete(["d1"], namespace=NS)
        assert await old_texts_served(reader, "TWO", LAG_S + 2 * WINDOW_S) == []
        assert not shows(await contents(reader))
