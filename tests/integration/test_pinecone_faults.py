"""Every Pinecone failure ends in one of our typed errors, within the documented time.

Each test talks to a stand-in on a loopback address of its own, so nothing the SDK keeps
per host name for the whole process carries over from the tests before.
"""

from __future__ import annotations

import itertools
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import pytest

from retrieval.adapters.pinecone.clients import PineconeConnection
from retrieval.adapters.pinecone.errors import RETRIES, worst_case_seconds
from retrieval.adapters.pinecone.freshness import PineconeLsns
from retrieval.adapters.pinecone.inference_embedder import PineconeInferenceEmbedder
from retrieval.adapters.pinecone.vector_index import PineconeVectorIndex
from retrieval.domain.vectors import VectorRecord
from retrieval.errors import (
    BackendTimeoutError,
    BackendUnavailableError,
    IndexNotFoundError,
    NotAuthorisedError,
    RateLimitedError,
    RetrievalError,
)
from retrieval_testkit.pinecone_standin import Fault, PineconeStandIn

NS = "faults"
REQUEST_TIMEOUT = 0.3
CALL_TIMEOUT = 1.0
BOUND = worst_case_seconds(REQUEST_TIMEOUT, CALL_TIMEOUT)
SCHEDULING_SLACK = 0.5
LOOPBACK_HOSTS = (f"127.0.{n // 250}.{n % 250 + 2}" for n in itertools.count())


@pytest.fixture
def standin() -> Iterator[PineconeStandIn]:
    with PineconeStandIn(dimension=4, host=next(LOOPBACK_HOSTS)) as running:
        yield running


def connect(url: str, *, api_key: str = "standin-key", call_timeout: float = CALL_TIMEOUT):
    return PineconeConnection(
        api_key=api_key,
        index_host=url,
        control_host=url,
        request_timeout=REQUEST_TIMEOUT,
        call_timeout=call_timeout,
    )


@pytest.fixture
async def index(standin: PineconeStandIn) -> AsyncIterator[PineconeVectorIndex]:
    index = PineconeVectorIndex(connect(standin.url), PineconeLsns())
    await index.upsert([VectorRecord(id="a", values=(1.0, 0, 0, 0))], NS)
    standin.clear_log()
    yield index
    await index.close()


@pytest.fixture
async def embedder(standin: PineconeStandIn) -> AsyncIterator[PineconeInferenceEmbedder]:
    embedder = PineconeInferenceEmbedder(connect(standin.url))
    yield embedder
    await embedder.close()


async def timed_failure(
    call: Callable[[], Awaitable[object]], expected: type[RetrievalError]
) -> tuple[RetrievalError, float]:
    started = time.perf_counter()
    with pytest.raises(expected) as raised:
        await call()
    return raised.value, time.perf_counter() - started


def query(index: PineconeVectorIndex) -> Callable[[], Awaitable[object]]:
    return lambda: index.query([1, 0, 0, 0], top_k=1, namespace=NS)


async def test_a_wrong_api_key_is_not_authorised(standin: PineconeStandIn) -> None:
    index = PineconeVectorIndex(connect(standin.url, api_key="wrong"), PineconeLsns())
    embedder = PineconeInferenceEmbedder(connect(standin.url, api_key="wrong"))
    try:
        _, elapsed = await timed_failure(query(index), NotAuthorisedError)
        await timed_failure(lambda: embedder.embed_query("blight"), NotAuthorisedError)
    finally:
        await index.close()
        await embedder.close()
    assert [request.status for request in standin.requests] == [401, 401]
    assert elapsed < BOUND


async def test_forbidden_is_not_authorised(
    index: PineconeVectorIndex, standin: PineconeStandIn
) -> None:
    with standin.faults(Fault(status=403), count=RETRIES.attempts):
        await timed_failure(index.stats, NotAuthorisedError)
    assert len(standin.requests) == 1


async def test_404_means_the_index_is_not_there(
    index: PineconeVectorIndex, standin: PineconeStandIn
) -> None:
    with standin.faults(Fault(status=404), count=RETRIES.attempts):
        error, elapsed = await timed_failure(query(index), IndexNotFoundError)
    assert "404" in str(error)
    assert elapsed < BOUND


async def test_404_on_a_delete_in_a_live_namespace_is_not_swallowed(
    index: PineconeVectorIndex, standin: PineconeStandIn
) -> None:
    with standin.faults(Fault(status=404), count=1):
        await timed_failure(lambda: index.delete(namespace=NS, ids=["a"]), IndexNotFoundError)
    assert [request.path for request in standin.requests] == [
        "/vectors/delete",
        "/describe_index_stats",
    ]


@pytest.mark.parametrize("path", ["index", "embed"])
async def test_429_is_rate_limited_with_its_retry_after(
    index: PineconeVectorIndex,
    embedder: PineconeInferenceEmbedder,
    standin: PineconeStandIn,
    path: str,
) -> None:
    call = query(index) if path == "index" else lambda: embedder.embed_query("blight")
    with standin.faults(Fault(status=429, retry_after="0"), count=RETRIES.attempts):
        error, elapsed = await timed_failure(call, RateLimitedError)
    assert isinstance(error, RateLimitedError)
    assert error.retry_after == 0.0
    assert len(standin.requests) == RETRIES.attempts
    assert elapsed < BOUND


@pytest.mark.parametrize("path", ["index", "embed"])
async def test_a_retry_after_past_the_deadline_fails_at_once_with_its_hint(
    index: PineconeVectorIndex,
    embedder: PineconeInferenceEmbedder,
    standin: PineconeStandIn,
    path: str,
) -> None:
    call = query(index) if path == "index" else lambda: embedder.embed_query("blight")
    with standin.faults(Fault(status=429, retry_after="30"), count=RETRIES.attempts):
        error, elapsed = await timed_failure(call, RateLimitedError)
    assert isinstance(error, RateLimitedError)
    assert error.retry_after == 30.0
    assert len(standin.requests) == 1
    assert elapsed < SCHEDULING_SLACK


async def test_a_retry_after_within_the_deadline_is_waited_for(
    index: PineconeVectorIndex, standin: PineconeStandIn
) -> None:
    started = time.perf_counter()
    with standin.faults(Fault(status=429, retry_after="0.4"), count=1):
        found = await query(index)()
    assert [match.id for match in found] == ["a"]
    assert [request.status for request in standin.requests] == [429, 200]
    assert time.perf_counter() - started >= 0.4


@pytest.mark.parametrize("status", [500, 502, 503])
async def test_5xx_is_unavailable_after_the_retries(
    index: PineconeVectorIndex, standin: PineconeStandIn, status: int
) -> None:
    with standin.faults(Fault(status=status, retry_after="0"), count=10):
        error, elapsed = await timed_failure(query(index), BackendUnavailableError)
    assert not isinstance(error, BackendTimeoutError)
    assert str(status) in str(error)
    assert 1 <= len(standin.requests) <= RETRIES.attempts
    assert elapsed < BOUND


async def test_one_5xx_is_retried(index: PineconeVectorIndex, standin: PineconeStandIn) -> None:
    with standin.faults(Fault(status=503, retry_after="0"), count=1):
        found = await query(index)()
    assert [match.id for match in found] == ["a"]
    assert [request.status for request in standin.requests] == [503, 200]


async def test_a_pause_past_the_deadline_is_not_taken(
    index: PineconeVectorIndex, standin: PineconeStandIn
) -> None:
    hurried = PineconeVectorIndex(connect(standin.url, call_timeout=0.3), PineconeLsns())
    try:
        with standin.faults(Fault(status=503), count=10):
            error, elapsed = await timed_failure(query(hurried), BackendUnavailableError)
    finally:
        await hurried.close()
    assert not isinstance(error, BackendTimeoutError)
    assert "503" in str(error)
    assert elapsed < 0.3 + SCHEDULING_SLACK


@pytest.mark.parametrize("path", ["index", "embed"])
async def test_slow_answers_time_out_within_the_bound(
    index: PineconeVectorIndex,
    embedder: PineconeInferenceEmbedder,
    standin: PineconeStandIn,
    path: str,
) -> None:
    call = query(index) if path == "index" else lambda: embedder.embed_query("blight")
    with standin.faults(Fault(delay=5.0), count=10):
        _, elapsed = await timed_failure(call, BackendTimeoutError)
    assert elapsed < BOUND + SCHEDULING_SLACK


async def test_a_refused_connection_is_unavailable() -> None:
    host = next(LOOPBACK_HOSTS)
    with socket.socket() as probe:
        probe.bind((host, 0))
        port = probe.getsockname()[1]
    patient = RETRIES.attempts * REQUEST_TIMEOUT + RETRIES.worst_case_pauses() + 1.0
    index = PineconeVectorIndex(
        connect(f"http://{host}:{port}", call_timeout=patient), PineconeLsns()
    )
    try:
        error, elapsed = await timed_failure(index.stats, BackendUnavailableError)
    finally:
        await index.close()
    assert not isinstance(error, BackendTimeoutError)
    assert elapsed < worst_case_seconds(REQUEST_TIMEOUT, patient)
