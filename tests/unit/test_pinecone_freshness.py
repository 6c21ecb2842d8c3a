"""What the Pinecone adapter remembers of its writes, and when it stops waiting for the index."""

from __future__ import annotations

import asyncio

import pytest
from pinecone import QueryResponse
from pinecone.models.response_info import ResponseInfo

from retrieval.adapters.pinecone.freshness import WrittenLsns, reflecting


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def answer(indexed: int | None) -> QueryResponse:
    headers = {} if indexed is None else {"x-pinecone-max-indexed-lsn": str(indexed)}
    return QueryResponse(
        matches=[], namespace="ns", response_info=ResponseInfo(raw_headers=headers)
    )


def test_the_highest_acknowledged_lsn_is_kept() -> None:
    written = WrittenLsns()
    for lsn in (3, 7, 5, None):
        written.remember("ns", lsn)
    assert written.get("ns") == 7
    assert written.get("other") is None


def test_the_namespaces_written_last_are_kept() -> None:
    written = WrittenLsns(capacity=2)
    written.remember("a", 1)
    written.remember("b", 1)
    written.remember("a", 2)
    written.remember("c", 1)
    assert [written.get(name) for name in ("a", "b", "c")] == [2, None, 1]


def test_a_write_is_forgotten_after_the_window() -> None:
    clock = Clock()
    written = WrittenLsns(window=60.0, clock=clock)
    written.remember("ns", 4)
    clock.now = 60.0
    assert written.get("ns") == 4
    clock.now = 60.5
    assert written.get("ns") is None


async def test_waiting_ends_once_an_answer_reflects_the_write() -> None:
    answers = iter([answer(1), answer(2), answer(3)])

    async def search() -> QueryResponse:
        return next(answers)

    deadline = asyncio.get_running_loop().time() + 60
    found = await reflecting(answer(0), search, 3, deadline=deadline, room=1.0)
    assert found is not None
    assert found.response_info is not None
    assert found.response_info.lsn_reconciled == 3


@pytest.mark.parametrize("first", [answer(None), QueryResponse(matches=[], namespace="ns")])
async def test_an_index_that_does_not_say_how_far_it_got_is_not_waited_for(
    first: QueryResponse,
) -> None:
    async def search() -> QueryResponse:
        raise AssertionError("asked again")

    deadline = asyncio.get_running_loop().time() + 60
    assert await reflecting(first, search, 1, deadline=deadline, room=1.0) is None


async def test_no_query_is_sent_without_room_before_the_deadline() -> None:
    asked = []

    async def search() -> QueryResponse:
        asked.append(1)
        return answer(0)

    deadline = asyncio.get_running_loop().time() + 0.5
    assert await reflecting(answer(0), search, 1, deadline=deadline, room=1.0) is None
    assert asked == []


async def test_a_query_under_way_at_the_deadline_is_abandoned() -> None:
    async def search() -> QueryResponse:
        await asyncio.sleep(3600)
        return answer(1)

    deadline = asyncio.get_running_loop().time() + 0.3
    assert await reflecting(answer(0), search, 1, deadline=deadline, room=0.0) is None
