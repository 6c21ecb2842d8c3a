"""What the sparse keyword adapter puts on the wire, read back from the stand-in's request log.

Each stand-in listens on a loopback address of its own: the SDK keeps one retry budget
per host name for the whole process, so its retries behave the same whatever ran before.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import AsyncIterator, Iterator

import pytest
from pinecone import AsyncIndex, AsyncPinecone, SparseEmbedding
from pinecone.errors import ApiError

from retrieval.adapters.pinecone.clients import PineconeConnection
from retrieval.adapters.pinecone.errors import RETRIES
from retrieval.adapters.pinecone.freshness import SPARSE, PineconeLsns
from retrieval.adapters.pinecone.limits import MAX_REQUEST_BYTES
from retrieval.adapters.pinecone.sparse_keyword_index import TERMLESS, PineconeSparseKeywordIndex
from retrieval.domain.keywords import KeywordRecord
from retrieval.errors import (
    BackendTimeoutError,
    BackendUnavailableError,
    IndexNotFoundError,
    InvalidFilterError,
    InvalidRequestError,
    NotAuthorisedError,
    RateLimitedError,
)
from retrieval_testkit.pinecone_standin import (
    SPARSE_EMBED_MODEL,
    Fault,
    PineconeStandIn,
    records_in,
    token_index,
)

NS = "tea-estates"
LOOPBACK_HOSTS = (f"127.0.{100 + n // 250}.{n % 250 + 2}" for n in itertools.count())


@pytest.fixture
def standin() -> Iterator[PineconeStandIn]:
    with PineconeStandIn(vector_type="sparse", host=next(LOOPBACK_HOSTS)) as running:
        yield running


def connect(standin: PineconeStandIn, api_key: str | None = None) -> PineconeConnection:
    return PineconeConnection(
        api_key=api_key or standin.api_key,
        index_host=standin.url,
        control_host=standin.url,
        request_timeout=5.0,
        call_timeout=20.0,
    )


@pytest.fixture
async def index(standin: PineconeStandIn) -> AsyncIterator[PineconeSparseKeywordIndex]:
    index = PineconeSparseKeywordIndex(connect(standin), PineconeLsns(SPARSE), concurrency=3)
    yield index
    await index.close()


def records(count: int, **metadata: object) -> list[KeywordRecord]:
    return [
        KeywordRecord(id=f"rec-{n:05d}", text=f"blister blight on leaf {n}", metadata=metadata)
        for n in range(count)
    ]


def sparse(weights: dict[str, float]) -> dict[str, list]:
    """The stand-in model's sparse vector for tokens of these weights."""
    return {"indices": [token_index(token) for token in weights], "values": list(weights.values())}


async def test_records_go_as_sparse_values_with_their_metadata(
    index: PineconeSparseKeywordIndex, standin: PineconeStandIn
) -> None:
    written = await index.upsert(
        [
            KeywordRecord(id="a", text="Blight, blight and blister", metadata={"year": 2021}),
            KeywordRecord(id="b", text="tea leaf"),
        ],
        NS,
    )
    assert written == 2
    (embed,) = standin.requests_to("/embed")
    assert embed.body == {
        "model": SPARSE_EMBED_MODEL,
        "inputs": [{"text": "Blight, blight and blister"}, {"text": "tea leaf"}],
        "parameters": {"input_type": "passage", "truncate": "END"},
    }
    (upsert,) = standin.requests_to("/vectors/upsert")
    assert upsert.body["namespace"] == NS
    assert upsert.body["vectors"] == [
        {
            "id": "a",
            "values": [],
            "sparseValues": {
                "indices": [token_index("blight"), token_index("blister")],
                "values": [1.0 + math.log(2), 1.0],
            },
            "metadata": {"year": 2021},
        },
        {
            "id": "b",
            "values": [],
            "sparseValues": {
                "indices": [token_index("tea"), token_index("leaf")],
                "values": [1.0, 1.0],
            },
        },
    ]


async def test_texts_go_96_to_an_embed_and_records_1000_to_an_upsert(
    index: PineconeSparseKeywordIndex, standin: PineconeStandIn
) -> None:
    assert await index.upsert(records(2500), NS) == 2500
    embeds = standin.requests_to("/embed")
    assert sorted(len(request.body["inputs"]) for request in embeds) == [4] + [96] * 26
    assert {request.body["parameters"]["input_type"] for request in embeds} == {"passage"}
    upserts = standin.requests_to("/vectors/upsert")
    assert sorted(records_in(upserts)) == [500, 1000, 1000]
    assert {request.body["namespace"] for request in upserts} == {NS}
    assert await index.count(NS) == 2500


async def test_requests_over_2_mb_are_split(
    index: PineconeSparseKeywordIndex, standin: PineconeStandIn
) -> None:
    await index.upsert(records(150, notes="x" * 30_000), NS)
    upserts = standin.requests_to("/vectors/upsert")
    assert len(upserts) == 3
    assert all(request.size <= MAX_REQUEST_BYTES for request in upserts)
    assert all(request.status == 200 for request in upserts)
    assert await index.count(NS) == 150


@pytest.mark.parametrize(
    "oversize",
    [
        KeywordRecord(id="big", text="tea", metadata={"notes": "x" * 41_000}),
        KeywordRecord.model_construct(id="i" * 513, text="tea", metadata={}),
        KeywordRecord(id="thé", text="tea"),
    ],
    ids=["metadata over 40 KB", "id over 512", "non-ASCII id"],
)
async def test_a_record_over_a_limit_stops_the_upsert_before_anything_is_sent(
    index: PineconeSparseKeywordIndex, standin: PineconeStandIn, oversize: KeywordRecord
) -> None:
    with pytest.raises(InvalidRequestError):
        await index.upsert([*records(5), oversize], NS)
    assert standin.requests == []


async def test_a_query_is_embedded_as_a_query_and_sent_as_a_sparse_vector(
    index: PineconeSparseKeywordIndex, standin: PineconeStandIn
) -> None:
    await index.upsert(records(3, domain="plant_diseases", year=2021), NS)
    asked = {"domain": "plant_diseases", "$or": [{"year": {"$gte": 2020}}, {"tags": "x"}]}
    found = await index.query("What is blister blight?", top_k=2, namespace=NS, filter=asked)
    embed = standin.requests_to("/embed")[-1].body
    assert embed["inputs"] == [{"text": "What is blister blight?"}]
    assert embed["parameters"] == {"input_type": "query", "truncate": "END"}
    sent = standin.requests_to("/query")[-1].body
    assert sent == {
        "topK": 2,
        "includeValues": False,
        "includeMetadata": False,
        "namespace": NS,
        "filter": asked,
        "sparseVector": sparse({"blister": 1.0, "blight": 1.0}),
    }
    assert [match.id for match in found] == ["rec-00000", "rec-00001"]


async def test_no_filter_sends_none(
    index: PineconeSparseKeywordIndex, standin: PineconeStandIn
) -> None:
    await index.upsert(records(1), NS)
    await index.query("blight", top_k=1, namespace=NS, filter={})
    assert "filter" not in standin.requests_to("/query")[-1].body


async def test_a_malformed_filter_or_top_k_never_leaves_the_process(
    index: PineconeSparseKeywordIndex, standin: PineconeStandIn
) -> None:
    with pytest.raises(InvalidFilterError):
        await index.query("blight", top_k=1, namespace=NS, filter={"a": {"$regex": "x"}})
    with pytest.raises(InvalidRequestError, match="top_k"):
        await index.query("blight", top_k=10_001, namespace=NS)
    assert standin.requests == []


async def test_a_query_without_terms_asks_nothing_of_the_index(
    index: PineconeSparseKeywordIndex, standin: PineconeStandIn
) -> None:
    await index.upsert(records(3), NS)
    standin.clear_log()
    assert await index.query("what is the", top_k=5, namespace=NS) == []
    assert [request.path for request in standin.requests] == ["/embed"]
    assert await index.query("  ", top_k=5, namespace=NS) == []
    assert len(standin.requests) == 1


async def test_matches_rank_by_score_then_id_and_need_a_shared_term(
    index: PineconeSparseKeywordIndex,
) -> None:
    await index.upsert(
        [
            KeywordRecord(id="b", text="tea estates"),
            KeywordRecord(id="a", text="tea gardens"),
            KeywordRecord(id="c", text="tea tea harvest"),
            KeywordRecord(id="d", text="coffee"),
        ],
        NS,
    )
    found = await index.query("tea", top_k=10, namespace=NS)
    assert [(match.id, match.score) for match in found] == [
        ("c", pytest.approx(1.0 + math.log(2))),
        ("a", 1.0),
        ("b", 1.0),
    ]


async def test_an_unknown_namespace_finds_nothing(
    index: PineconeSparseKeywordIndex, standin: PineconeStandIn
) -> None:
    await index.upsert(records(2), NS)
    assert await index.query("blight", top_k=3, namespace="nowhere") == []
    standin.clear_log()
    with standin.faults(Fault(status=404, path="/query"), count=1):
        assert await index.query("blight", top_k=3, namespace="nowhere") == []
    assert [request.path for request in standin.requests] == [
        "/embed",
        "/query",
        "/describe_index_stats",
    ]


async def test_a_404_where_records_are_stored_is_not_swallowed(
    index: PineconeSparseKeywordIndex, standin: PineconeStandIn
) -> None:
    await index.upsert(records(2), NS)
    with (
        standin.faults(Fault(status=404, path="/query"), count=1),
        pytest.raises(IndexNotFoundError),
    ):
        await index.query("blight", top_k=3, namespace=NS)


async def test_a_missing_index_is_not_an_empty_namespace(
    index: PineconeSparseKeywordIndex, standin: PineconeStandIn
) -> None:
    missing = [Fault(status=404, path="/query"), Fault(status=404, path="/describe_index_stats")]
    for fault in missing:
        standin.inject(fault)
    with pytest.raises(IndexNotFoundError):
        await index.query("blight", top_k=3, namespace=NS)


async def test_a_text_without_terms_is_kept_but_never_found(
    index: PineconeSparseKeywordIndex, standin: PineconeStandIn
) -> None:
    await index.upsert([KeywordRecord(id="a", text="blister blight")], NS)
    written = await index.upsert(
        [
            KeywordRecord(id="a", text="What is it?"),
            KeywordRecord(id="b", text="?!"),
            KeywordRecord(id="c", text="tea"),
        ],
        NS,
    )
    assert written == 3
    sent = standin.requests_to("/vectors/upsert")[-1].body["vectors"]
    assert [record["sparseValues"] for record in sent] == [
        TERMLESS,
        TERMLESS,
        sparse({"tea": 1.0}),
    ]
    assert await index.count(NS) == 3
    assert [page async for page in index.list_ids(NS)] == [["a", "b", "c"]]
    assert await index.query("blister blight", top_k=3, namespace=NS) == []
    assert [match.id for match in await index.query("tea", top_k=3, namespace=NS)] == ["c"]
    await index.delete(namespace=NS, ids=["a", "b"])
    assert await index.count(NS) == 1


async def test_an_id_given_twice_is_written_once_with_its_last_text(
    index: PineconeSparseKeywordIndex, standin: PineconeStandIn
) -> None:
    written = await index.upsert(
        [KeywordRecord(id="a", text="blight"), KeywordRecord(id="a", text="harvest")], NS
    )
    assert written == 1
    assert standin.requests_to("/embed")[-1].body["inputs"] == [{"text": "harvest"}]
    assert [match.id for match in await index.query("harvest", top_k=3, namespace=NS)] == ["a"]
    assert await index.query("blight", top_k=3, namespace=NS) == []


async def test_deletes_send_at_most_1000_ids(
    index: PineconeSparseKeywordIndex, standin: PineconeStandIn
) -> None:
    await index.upsert(records(2200), NS)
    await index.delete(namespace=NS, ids=[f"rec-{n:05d}" for n in range(2100)])
    deletes = standin.requests_to("/vectors/delete")
    assert sorted(len(request.body["ids"]) for request in deletes) == [100, 1000, 1000]
    assert {request.body["namespace"] for request in deletes} == {NS}
    assert await index.count(NS) == 100
    await index.delete(namespace=NS, delete_all=True)
    assert standin.requests_to("/vectors/delete")[-1].body == {"deleteAll": True, "namespace": NS}
    assert await index.count(NS) == 0


async def test_deleting_where_nothing_is_stored_is_not_an_error(
    index: PineconeSparseKeywordIndex, standin: PineconeStandIn
) -> None:
    await index.delete(namespace="nowhere", ids=["a"])
    await index.delete(namespace="nowhere", delete_all=True)
    assert [request.status for request in standin.requests_to("/vectors/delete")] == [404, 404]


async def test_listing_asks_for_pages_of_100_and_follows_the_token(
    index: PineconeSparseKeywordIndex, standin: PineconeStandIn
) -> None:
    await index.upsert(records(250), NS)
    standin.clear_log()
    pages = [page async for page in index.list_ids(NS, prefix="rec-")]
    assert [len(page) for page in pages] == [100, 100, 50]
    sent = [request.params for request in standin.requests_to("/vectors/list")]
    assert [(params["namespace"], params["limit"]) for params in sent] == [([NS], ["100"])] * 3
    assert ["paginationToken" in params for params in sent] == [False, True, True]


async def test_a_wrong_api_key_is_not_authorised(standin: PineconeStandIn) -> None:
    index = PineconeSparseKeywordIndex(connect(standin, api_key="wrong"), PineconeLsns(SPARSE))
    try:
        with pytest.raises(NotAuthorisedError):
            await index.query("blight", top_k=1, namespace=NS)
        with pytest.raises(NotAuthorisedError):
            await index.count(NS)
    finally:
        await index.close()
    assert [(request.path, request.status) for request in standin.requests] == [
        ("/embed", 401),
        ("/describe_index_stats", 401),
    ]


@pytest.mark.parametrize("path", ["/embed", "/query"])
async def test_a_429_with_retry_after_0_is_retried(
    index: PineconeSparseKeywordIndex, standin: PineconeStandIn, path: str
) -> None:
    await index.upsert(records(1), NS)
    standin.clear_log()
    with standin.faults(Fault(status=429, retry_after="0", path=path), count=1):
        found = await index.query("blight", top_k=1, namespace=NS)
    assert [match.id for match in found] == ["rec-00000"]
    assert [request.status for request in standin.requests_to(path)] == [429, 200]


async def test_a_429_that_lasts_is_rate_limited_with_its_retry_after(
    index: PineconeSparseKeywordIndex, standin: PineconeStandIn
) -> None:
    lasting = Fault(status=429, retry_after="0")
    with standin.faults(lasting, count=RETRIES.attempts), pytest.raises(RateLimitedError) as raised:
        await index.upsert(records(1), NS)
    assert raised.value.retry_after == 0.0
    assert 1 <= len(standin.requests) <= RETRIES.attempts


@pytest.mark.parametrize("status", [500, 503])
async def test_5xx_is_unavailable_after_the_sdk_retries(
    index: PineconeSparseKeywordIndex, standin: PineconeStandIn, status: int
) -> None:
    failing = Fault(status=status, retry_after="0", path="/query")
    with standin.faults(failing, count=10), pytest.raises(BackendUnavailableError) as raised:
        await index.query("blight", top_k=1, namespace=NS)
    assert not isinstance(raised.value, BackendTimeoutError)
    assert str(status) in str(raised.value)
    assert 1 <= len(standin.requests_to("/query")) <= RETRIES.attempts


def test_an_embed_batch_above_96_is_refused(standin: PineconeStandIn) -> None:
    with pytest.raises(ValueError, match="96"):
        PineconeSparseKeywordIndex(connect(standin), PineconeLsns(SPARSE), embed_batch_size=97)


async def test_the_standin_embeds_sparse_as_the_sdk_reads_it(standin: PineconeStandIn) -> None:
    async with AsyncPinecone(api_key=standin.api_key, host=standin.url) as client:
        passage = await client.inference.embed(
            model=SPARSE_EMBED_MODEL,
            inputs=["Blister blight of tea: blight!"],
            parameters={"input_type": "passage", "return_tokens": True},
        )
        query = await client.inference.embed(
            model=SPARSE_EMBED_MODEL,
            inputs=["Blister blight of tea: blight!"],
            parameters={"input_type": "query"},
        )
    assert passage.vector_type == query.vector_type == "sparse"
    (embedding,) = passage.data
    assert isinstance(embedding, SparseEmbedding)
    assert embedding.sparse_tokens == ["blister", "blight", "tea"]
    assert embedding.sparse_indices == [token_index(token) for token in embedding.sparse_tokens]
    assert embedding.sparse_values == [1.0, 1.0 + math.log(2), 1.0]
    (asked,) = query.data
    assert isinstance(asked, SparseEmbedding)
    assert (asked.sparse_values, asked.sparse_tokens) == ([1.0, 1.0, 1.0], None)
    assert passage.usage.total_tokens == 5


async def test_the_sparse_standin_refuses_dense_values_and_reports_itself(
    standin: PineconeStandIn,
) -> None:
    async with AsyncIndex(host=standin.url, api_key=standin.api_key) as sdk:
        with pytest.raises(ApiError, match="Dense vectors are not supported"):
            await sdk.upsert(vectors=[{"id": "a", "values": [1.0, 0.0]}], namespace=NS)
        with pytest.raises(ApiError, match="Dense vectors are not supported"):
            await sdk.query(top_k=1, vector=[1.0, 0.0], namespace=NS)
        with pytest.raises(ApiError, match="at least one value"):
            await sdk.upsert(vectors=[{"id": "a", "sparse_values": {"indices": [], "values": []}}])
        await sdk.upsert(
            vectors=[{"id": "a", "sparse_values": {"indices": [7, 3], "values": [0.5, 2.0]}}],
            namespace=NS,
        )
        fetched = await sdk.fetch(ids=["a"], namespace=NS)
        stats = await sdk.describe_index_stats()
    assert fetched.vectors["a"].sparse_values is not None
    assert fetched.vectors["a"].sparse_values.indices == [7, 3]
    assert (stats.dimension, stats.metric, stats.vector_type) == (None, "dotproduct", "sparse")


async def test_the_dense_standin_refuses_sparse_values() -> None:
    with PineconeStandIn(dimension=2, host=next(LOOPBACK_HOSTS)) as dense:
        async with AsyncIndex(host=dense.url, api_key=dense.api_key) as sdk:
            with pytest.raises(ApiError, match="Sparse vectors are not supported"):
                await sdk.upsert(
                    vectors=[
                        {
                            "id": "a",
                            "values": [1.0, 0.0],
                            "sparse_values": {"indices": [1], "values": [1.0]},
                        }
                    ]
                )
            with pytest.raises(ApiError, match="Sparse vectors are not supported"):
                await sdk.query(
                    top_k=1, vector=[1.0, 0.0], sparse_vector={"indices": [1], "values": [1.0]}
                )
