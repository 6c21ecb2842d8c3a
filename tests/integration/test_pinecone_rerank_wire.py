"""What the Pinecone reranker puts on the wire, and how its failures end, read back from the
stand-in's request log.

Each stand-in listens on a loopback address of its own: the SDK keeps one retry budget per
host name for the whole process, so its retries behave the same whatever ran before.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import AsyncIterator, Iterator

import pytest
from pinecone import AsyncPinecone
from pinecone.errors import ApiError

from retrieval.adapters.pinecone.clients import PineconeConnection
from retrieval.adapters.pinecone.errors import RETRIES, worst_case_seconds
from retrieval.adapters.pinecone.reranker import PineconeReranker
from retrieval.errors import (
    BackendError,
    BackendTimeoutError,
    BackendUnavailableError,
    IndexNotFoundError,
    InvalidRequestError,
    NotAuthorisedError,
    RateLimitedError,
)
from retrieval_testkit.pinecone_standin import RERANK_MODELS, Fault, PineconeStandIn

LOOPBACK_HOSTS = (f"127.1.{n // 250}.{n % 250 + 2}" for n in itertools.count())
REQUEST_TIMEOUT = 0.3
CALL_TIMEOUT = 1.0
SCHEDULING_SLACK = 0.5
QUERY = "what causes blister blight on tea leaves"
ANSWER = "Blister blight on tea leaves is caused by the fungus Exobasidium vexans."


@pytest.fixture
def standin() -> Iterator[PineconeStandIn]:
    with PineconeStandIn(dimension=4, host=next(LOOPBACK_HOSTS)) as running:
        yield running


def connect(standin: PineconeStandIn, *, api_key: str | None = None) -> PineconeConnection:
    return PineconeConnection(
        api_key=api_key or standin.api_key,
        control_host=standin.url,
        request_timeout=REQUEST_TIMEOUT,
        call_timeout=CALL_TIMEOUT,
    )


@pytest.fixture
async def reranker(standin: PineconeStandIn) -> AsyncIterator[PineconeReranker]:
    reranker = PineconeReranker(connect(standin))
    yield reranker
    await reranker.close()


def passages(count: int, answer_at: int) -> list[str]:
    texts = [f"Invoice {n} lists garden tools." for n in range(count)]
    texts[answer_at] = ANSWER
    return texts


async def test_one_call_sends_the_model_query_documents_top_n_and_truncate(
    reranker: PineconeReranker, standin: PineconeStandIn
) -> None:
    ranked = await reranker.rerank(QUERY, ["Frost on tea bushes.", ANSWER], 1)
    (request,) = standin.requests_to("/rerank")
    assert request.body == {
        "model": "bge-reranker-v2-m3",
        "query": QUERY,
        "documents": [{"text": "Frost on tea bushes."}, {"text": ANSWER}],
        "rank_fields": ["text"],
        "return_documents": False,
        "top_n": 1,
        "parameters": {"truncate": "END"},
    }
    assert request.headers["Api-Key"] == standin.api_key
    assert [(p.index, p.score) for p in ranked] == [(1, 0.8)]


async def test_passages_past_the_cap_are_split_and_merged_by_score(
    standin: PineconeStandIn,
) -> None:
    reranker = PineconeReranker(connect(standin), concurrency=2)
    texts = passages(250, answer_at=230)
    texts[120] = "Tea leaves are picked by hand."
    try:
        with standin.faults(Fault(delay=0.2, path="/rerank"), count=3):
            ranked = await reranker.rerank(QUERY, texts, 3)
    finally:
        await reranker.close()
    requests = standin.requests_to("/rerank")
    sent = sorted(([d["text"] for d in r.body["documents"]], r.body["top_n"]) for r in requests)
    assert sent == sorted((texts[start : start + 100], 3) for start in (0, 100, 200))
    assert [p.index for p in ranked] == [230, 120, 0]
    assert [p.score for p in ranked] == [0.8, 0.4, 0.0]
    assert standin.peak_in_flight == 2


async def test_a_call_asks_for_no_more_than_it_holds(
    reranker: PineconeReranker, standin: PineconeStandIn
) -> None:
    ranked = await reranker.rerank(QUERY, passages(130, answer_at=7), 120)
    assert sorted(r.body["top_n"] for r in standin.requests_to("/rerank")) == [30, 100]
    assert len({p.index for p in ranked}) == 120
    assert ranked[0].index == 7


async def test_a_cohere_model_takes_200_and_no_truncate(standin: PineconeStandIn) -> None:
    reranker = PineconeReranker(connect(standin), model="cohere-rerank-3.5")
    try:
        ranked = await reranker.rerank(QUERY, passages(250, answer_at=240), 1)
    finally:
        await reranker.close()
    requests = standin.requests_to("/rerank")
    assert sorted(len(r.body["documents"]) for r in requests) == [50, 200]
    assert all("parameters" not in r.body for r in requests)
    assert [p.index for p in ranked] == [240]


async def test_a_long_query_is_cut_to_128_words_for_bge(
    reranker: PineconeReranker, standin: PineconeStandIn
) -> None:
    query = QUERY + " and" + " then more words" * 100
    ranked = await reranker.rerank(query, ["Frost on tea bushes.", ANSWER], 1)
    sent = standin.requests_to("/rerank")[0].body["query"]
    assert len(sent.split()) == 128
    assert query.startswith(sent)
    assert ranked[0].index == 1


async def test_a_long_query_goes_whole_to_a_model_without_a_query_cap(
    standin: PineconeStandIn,
) -> None:
    reranker = PineconeReranker(connect(standin), model="pinecone-rerank-v0")
    query = QUERY + " more" * 300
    try:
        await reranker.rerank(query, [ANSWER], 1)
    finally:
        await reranker.close()
    assert standin.requests_to("/rerank")[0].body["query"] == query


async def test_a_passage_past_the_pair_budget_is_cut_by_the_server(
    reranker: PineconeReranker, standin: PineconeStandIn
) -> None:
    long_answer = ANSWER + " More about the fungus." * 400
    ranked = await reranker.rerank(QUERY, ["Frost on tea bushes.", long_answer], 2)
    assert [p.index for p in ranked] == [1, 0]
    assert standin.requests_to("/rerank")[0].body["documents"][1]["text"] == long_answer


async def test_the_standin_refuses_what_pinecone_refuses(standin: PineconeStandIn) -> None:
    cap = RERANK_MODELS["bge-reranker-v2-m3"].documents
    async with AsyncPinecone(api_key=standin.api_key, host=standin.url) as client:
        with pytest.raises(ApiError) as too_many:
            await client.inference.rerank(
                model="bge-reranker-v2-m3", query=QUERY, documents=["tea"] * (cap + 1)
            )
        with pytest.raises(ApiError) as untruncated:
            await client.inference.rerank(
                model="bge-reranker-v2-m3", query=QUERY, documents=["tea " * 1024]
            )
    assert (too_many.value.status_code, untruncated.value.status_code) == (400, 400)


async def test_an_unknown_model_is_sent_within_the_smallest_limits(
    standin: PineconeStandIn,
) -> None:
    reranker = PineconeReranker(connect(standin), model="rerank-next", concurrency=1)
    try:
        with pytest.raises(BackendError) as raised:
            await reranker.rerank(QUERY, passages(150, answer_at=0), 2)
    finally:
        await reranker.close()
    assert not isinstance(raised.value, IndexNotFoundError)
    assert "rerank-next" in str(raised.value)
    (request,) = standin.requests_to("/rerank")
    assert request.status == 404
    assert len(request.body["documents"]) == 100
    assert "parameters" not in request.body


async def test_a_refused_request_is_the_backends_failure(
    reranker: PineconeReranker, standin: PineconeStandIn
) -> None:
    with (
        standin.faults(Fault(status=400, path="/rerank"), count=1),
        pytest.raises(BackendError) as raised,
    ):
        await reranker.rerank(QUERY, [ANSWER], 1)
    assert not isinstance(raised.value, InvalidRequestError)


async def test_a_wrong_api_key_is_not_authorised(standin: PineconeStandIn) -> None:
    reranker = PineconeReranker(connect(standin, api_key="wrong"))
    try:
        with pytest.raises(NotAuthorisedError):
            await reranker.rerank(QUERY, [ANSWER], 1)
    finally:
        await reranker.close()
    assert [r.status for r in standin.requests] == [401]


async def test_a_429_with_retry_after_0_is_retried(
    reranker: PineconeReranker, standin: PineconeStandIn
) -> None:
    with standin.faults(Fault(status=429, retry_after="0", path="/rerank"), count=1):
        ranked = await reranker.rerank(QUERY, ["Frost on tea bushes.", ANSWER], 1)
    assert [r.status for r in standin.requests] == [429, 200]
    assert ranked[0].index == 1


async def test_429s_end_rate_limited_with_their_retry_after(
    reranker: PineconeReranker, standin: PineconeStandIn
) -> None:
    with (
        standin.faults(Fault(status=429, retry_after="0"), count=RETRIES.attempts),
        pytest.raises(RateLimitedError) as raised,
    ):
        await reranker.rerank(QUERY, [ANSWER], 1)
    assert raised.value.retry_after == 0.0
    assert 1 <= len(standin.requests) <= RETRIES.attempts


@pytest.mark.parametrize("status", [500, 503])
async def test_5xx_is_unavailable(
    reranker: PineconeReranker, standin: PineconeStandIn, status: int
) -> None:
    with (
        standin.faults(Fault(status=status, retry_after="0"), count=10),
        pytest.raises(BackendUnavailableError) as raised,
    ):
        await reranker.rerank(QUERY, [ANSWER], 1)
    assert not isinstance(raised.value, BackendTimeoutError)
    assert str(status) in str(raised.value)
    assert 1 <= len(standin.requests) <= RETRIES.attempts


async def test_a_slow_answer_times_out_within_the_bound(
    reranker: PineconeReranker, standin: PineconeStandIn
) -> None:
    started = time.perf_counter()
    with standin.faults(Fault(delay=5.0), count=10), pytest.raises(BackendTimeoutError):
        await reranker.rerank(QUERY, [ANSWER], 1)
    elapsed = time.perf_counter() - started
    assert elapsed < worst_case_seconds(REQUEST_TIMEOUT, CALL_TIMEOUT) + SCHEDULING_SLACK
