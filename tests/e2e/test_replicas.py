"""Two ``retrieval serve`` replicas over one MongoDB-protocol server and the Pinecone stand-in
made eventually consistent (writes shown 1 s late): a write acknowledged by one replica is
answered by both within the index's lag plus the promised second, and never undone by a
cache afterwards; a deleted document is never served with its text past that bound. The same
again with the independent emulator needledb as the dense index."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import ExitStack
from pathlib import Path

import pytest

from retrieval.errors import NotFoundError
from retrieval.grpc import RetrievalClient
from retrieval_testkit.needledb_server import needledb_server
from retrieval_testkit.replica_set import replica_set
from retrieval_testkit.versioned_document import OTHER, QUESTION, shows, version

NS = "replicas"
LAG_S = 1.0
BOUND_S = LAG_S + 1.0


@pytest.fixture(params=["stand-in", "needledb"])
async def clients(
    request: pytest.FixtureRequest, tmp_path: Path, mongo_uri: str
) -> AsyncIterator[list[RetrievalClient]]:
    with ExitStack() as stack:
        needledb = None
        if request.param == "needledb":
            needledb = stack.enter_context(needledb_server(tmp_path / "needledb"))
        async with replica_set(tmp_path, mongo_uri, 2, LAG_S, needledb) as replicas:
            assert replicas.bound_s == BOUND_S
            yield replicas.clients


async def contents(client: RetrievalClient) -> list[str]:
    try:
        result = await client.retrieve(QUESTION, top_k=5, namespace=NS)
    except NotFoundError:
        return []
    return [match.content for match in result.matches]


async def seconds_until(check: Callable[[], Awaitable[bool]], limit_s: float) -> float:
    """Seconds until ``check`` holds, asking every 0.1 s; ``limit_s`` if it never does."""
    started = time.monotonic()
    while time.monotonic() - started < limit_s:
        if await check():
            return time.monotonic() - started
        await asyncio.sleep(0.1)
    return limit_s


async def stays(check: Callable[[], Awaitable[bool]], for_s: float) -> bool:
    """Whether ``check`` holds at every ask for ``for_s`` seconds."""
    ended = time.monotonic() + for_s
    while time.monotonic() < ended:
        if not await check():
            return False
        await asyncio.sleep(0.1)
    return True


async def answers_two(client: RetrievalClient) -> bool:
    found = await contents(client)
    return shows(found, "TWO") and not shows(found, "ONE")


async def forgot_d1(client: RetrievalClient) -> bool:
    return not shows(await contents(client))


async def test_every_replica_answers_a_write_within_the_bound_and_keeps_it(
    clients: list[RetrievalClient],
) -> None:
    writer, reader = clients
    await writer.ingest_documents([version("ONE"), OTHER], namespace=NS)
    await asyncio.sleep(BOUND_S + LAG_S)
    assert shows(await contents(reader), "ONE")
    assert shows(await contents(reader), "ONE")

    await writer.ingest_documents([version("TWO")], namespace=NS)
    for check in (answers_two, forgot_d1):
        if check is forgot_d1:
            await writer.delete(["d1"], namespace=NS)
        for client in (reader, writer):
            asked = functools.partial(check, client)
            assert await seconds_until(asked, 10 * BOUND_S) <= BOUND_S
            assert await stays(asked, BOUND_S)
