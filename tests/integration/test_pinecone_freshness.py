"""Queries right after a write, on an index that shows writes late, as Pinecone serverless does.

The real SDK talks to a stand-in whose writes stay hidden from reads for some queries or
seconds, numbered as Pinecone numbers them (``x-pinecone-request-lsn`` on writes,
``x-pinecone-max-indexed-lsn`` on queries).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator

import pytest
from pinecone import AsyncIndex

from retrieval.adapters.pinecone.freshness import PineconeLsns
from retrieval.adapters.pinecone.vector_index import PineconeVectorIndex
from retrieval.domain.vectors import VectorRecord
from retrieval.errors import NamespaceNotFoundError
from retrieval_testkit.pinecone_standin import PineconeStandIn

NS = "fresh-harvest"
LEAF = VectorRecord(id="leaf", values=(1.0, 0.0, 0.0, 0.0), metadata={"domain": "tea"})
HIDDEN_FOR_QUERIES = 2


@pytest.fixture
def standin() -> Iterator[PineconeStandIn]:
    with PineconeStandIn(dimension=4, lag_queries=HIDDEN_FOR_QUERIES) as running:
        yield running


@pytest.fixture
async def index(standin: PineconeStandIn) -> AsyncIterator[PineconeVectorIndex]:
    index = PineconeVectorIndex(standin.connection(), PineconeLsns())
    yield index
    await index.close()


def query(index: PineconeVectorIndex, namespace: str = NS, filter: dict | None = None):
    return index.query([1, 0.1, 0, 0], top_k=3, namespace=namespace, filter=filter)


async def test_the_standin_numbers_writes_and_queries_report_what_they_reflect(
    standin: PineconeStandIn,
) -> None:
    sdk = AsyncIndex(host=standin.url, api_key=standin.api_key)
    try:
        first = await sdk.upsert(vectors=[("a", [1, 0, 0, 0])], namespace=NS)
        second = await sdk.upsert(vectors=[("b", [0, 1, 0, 0])], namespace=NS)
        other = await sdk.upsert(vectors=[("c", [0, 0, 1, 0])], namespace="other")
        seen = [
            await sdk.query(vector=[1, 0, 0, 0], top_k=2, namespace=NS)
            for _ in range(HIDDEN_FOR_QUERIES + 1)
        ]
    finally:
        await sdk.close()
    assert [w.response_info.lsn_committed for w in (first, second, other)] == [1, 2, 1]
    assert [len(answer.matches) for answer in seen] == [0, 0, 2]
    assert [answer.response_info.lsn_reconciled for answer in seen] == [0, 0, 2]


@pytest.mark.parametrize("filter", [None, {"domain": "tea"}], ids=["unfiltered", "filtered"])
async def test_a_query_right_after_the_first_upsert_finds_it(
    index: PineconeVectorIndex, standin: PineconeStandIn, filter: dict | None
) -> None:
    await index.upsert([LEAF], NS)
    found = await query(index, filter=filter)
    assert [match.id for match in found] == ["leaf"]
    assert len(standin.requests_to("/query")) == HIDDEN_FOR_QUERIES + 1


async def test_a_query_after_a_write_sees_it_once_the_index_has_caught_up() -> None:
    with PineconeStandIn(dimension=4, lag_seconds=0.5) as standin:
        index = PineconeVectorIndex(standin.connection(), PineconeLsns())
        try:
            await index.upsert([LEAF], NS)
            assert [match.id for match in await query(index)] == ["leaf"]
        finally:
            await index.close()


@pytest.mark.parametrize(
    ("filter", "requests"), [(None, 1), ({"domain": "tea"}, 2)], ids=["unfiltered", "filtered"]
)
async def test_a_namespace_never_written_is_still_not_found_at_once(
    index: PineconeVectorIndex, standin: PineconeStandIn, filter: dict | None, requests: int
) -> None:
    await index.upsert([LEAF], NS)
    with pytest.raises(NamespaceNotFoundError):
        await query(index, namespace="never-written", filter=filter)
    assert len(standin.requests_to("/query")) == requests


async def test_a_namespace_emptied_after_the_write_is_not_found(
    index: PineconeVectorIndex,
) -> None:
    await index.upsert([LEAF], NS)
    await index.delete(namespace=NS, delete_all=True)
    with pytest.raises(NamespaceNotFoundError):
        await query(index)


async def test_a_filter_matching_nothing_in_a_namespace_shown_is_no_error(
    index: PineconeVectorIndex,
) -> None:
    await index.upsert([LEAF], NS)
    assert await query(index) != []
    assert await query(index, filter={"domain": "coffee"}) == []


async def test_a_namespace_the_index_shows_is_answered_at_once(
    index: PineconeVectorIndex, standin: PineconeStandIn
) -> None:
    await index.upsert([LEAF], NS)
    assert await query(index) != []
    bean = VectorRecord(id="bean", values=(1.0, 0.2, 0.0, 0.0), metadata={"domain": "coffee"})
    await index.upsert([bean], NS)
    standin.clear_log()
    assert await query(index, filter={"domain": "coffee"}) == []
    assert len(standin.requests_to("/query")) == 2


async def test_the_wait_ends_within_the_call_timeout_with_no_matches() -> None:
    call_timeout = 2.0
    with PineconeStandIn(dimension=4, lag_seconds=3600) as standin:
        index = PineconeVectorIndex(
            standin.connection(request_timeout=0.5, call_timeout=call_timeout), PineconeLsns()
        )
        try:
            await index.upsert([LEAF], NS)
            started = time.monotonic()
            found = await query(index)
            elapsed = time.monotonic() - started
        finally:
            await index.close()
    assert found == []
    assert len(standin.requests_to("/query")) > 1
    assert elapsed < 2 * call_timeout


async def test_a_replica_that_did_not_write_reports_what_the_index_shows(
    index: PineconeVectorIndex, standin: PineconeStandIn
) -> None:
    other_replica = PineconeVectorIndex(standin.connection(), PineconeLsns())
    try:
        await index.upsert([LEAF], NS)
        for _ in range(HIDDEN_FOR_QUERIES):
            with pytest.raises(NamespaceNotFoundError):
                await query(other_replica)
        assert [match.id for match in await query(other_replica)] == ["leaf"]
    finally:
        await other_replica.close()
