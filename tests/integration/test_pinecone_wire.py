"""What the Pinecone adapters put on the wire, read back from the stand-in's request log."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Iterator
from urllib.parse import urlencode

import pytest
from pinecone import AsyncIndex
from pinecone.errors import ApiError

from retrieval.adapters.pinecone.clients import PineconeConnection
from retrieval.adapters.pinecone.freshness import PineconeLsns
from retrieval.adapters.pinecone.inference_embedder import PineconeInferenceEmbedder
from retrieval.adapters.pinecone.limits import MAX_REQUEST_BYTES
from retrieval.adapters.pinecone.vector_index import MAX_FETCH_QUERY_CHARS, PineconeVectorIndex
from retrieval.domain.vectors import VectorRecord
from retrieval.errors import IndexNotFoundError, InvalidFilterError, InvalidRequestError
from retrieval.ports.vector_index import MAX_FETCH_IDS
from retrieval_testkit.pinecone_standin import Fault, PineconeStandIn, records_in

NS = "tea-estates"


@pytest.fixture
def standin() -> Iterator[PineconeStandIn]:
    with PineconeStandIn(dimension=4) as running:
        yield running


@pytest.fixture
def connection(standin: PineconeStandIn) -> PineconeConnection:
    return standin.connection()


@pytest.fixture
async def index(connection: PineconeConnection) -> AsyncIterator[PineconeVectorIndex]:
    index = PineconeVectorIndex(connection, PineconeLsns(), concurrency=3)
    yield index
    await index.close()


@pytest.fixture
async def embedder(connection: PineconeConnection) -> AsyncIterator[PineconeInferenceEmbedder]:
    embedder = PineconeInferenceEmbedder(connection, dimension=1024)
    yield embedder
    await embedder.close()


def records(count: int, **metadata: object) -> list[VectorRecord]:
    return [
        VectorRecord(id=f"rec-{n:05d}", values=(1.0, n % 7 + 1.0, 0.5, 0.0), metadata=metadata)
        for n in range(count)
    ]


async def test_query_sends_the_namespace_and_filter_as_asked(
    index: PineconeVectorIndex, standin: PineconeStandIn
) -> None:
    await index.upsert(records(3, domain="plant_diseases", year=2021), NS)
    asked = {"domain": "plant_diseases", "$or": [{"year": {"$gte": 2020}}, {"tags": "x"}]}
    found = await index.query([1, 0, 0, 0], top_k=2, namespace=NS, filter=asked)
    sent = standin.requests_to("/query")[-1].body
    assert sent["namespace"] == NS
    assert sent["filter"] == asked
    assert (sent["topK"], sent["includeMetadata"], sent["includeValues"]) == (2, True, False)
    assert len(found) == 2
    assert all(match.values is None for match in found)


async def test_no_filter_sends_none(index: PineconeVectorIndex, standin: PineconeStandIn) -> None:
    await index.upsert(records(1), NS)
    await index.query([1, 0, 0, 0], top_k=1, namespace=NS, filter={})
    assert "filter" not in standin.requests_to("/query")[-1].body


async def test_a_malformed_filter_never_leaves_the_process(
    index: PineconeVectorIndex, standin: PineconeStandIn
) -> None:
    with pytest.raises(InvalidFilterError):
        await index.query([1, 0, 0, 0], top_k=1, namespace=NS, filter={"a": {"$regex": "x"}})
    assert standin.requests == []


async def test_more_than_1000_records_are_split(
    index: PineconeVectorIndex, standin: PineconeStandIn
) -> None:
    assert await index.upsert(records(2500), NS) == 2500
    upserts = standin.requests_to("/vectors/upsert")
    assert sorted(records_in(upserts)) == [500, 1000, 1000]
    assert {request.body["namespace"] for request in upserts} == {NS}
    assert (await index.stats()).namespaces[NS].vector_count == 2500


async def test_requests_over_2_mb_are_split(
    index: PineconeVectorIndex, standin: PineconeStandIn
) -> None:
    heavy = records(150, notes="x" * 30_000)
    await index.upsert(heavy, NS)
    upserts = standin.requests_to("/vectors/upsert")
    assert len(upserts) == 3
    assert all(request.size <= MAX_REQUEST_BYTES for request in upserts)
    assert all(request.status == 200 for request in upserts)
    assert sum(records_in(upserts)) == 150
    assert (await index.stats()).namespaces[NS].vector_count == 150


async def test_upserts_in_flight_stay_within_the_bound(
    index: PineconeVectorIndex, standin: PineconeStandIn
) -> None:
    standin.inject(Fault(delay=0.1), count=8)
    await index.upsert(records(8000), NS)
    assert len(standin.requests_to("/vectors/upsert")) == 8
    assert 2 <= standin.peak_in_flight <= 3


@pytest.mark.parametrize(
    "oversize",
    [
        VectorRecord(id="big", values=(1.0, 0, 0, 0), metadata={"notes": "x" * 41_000}),
        VectorRecord.model_construct(id="i" * 513, values=(1.0, 0, 0, 0), metadata={}),
        VectorRecord(id="thé", values=(1.0, 0, 0, 0)),
        VectorRecord(id="zero", values=(0.0, 0, 0, 0)),
        VectorRecord(id="short", values=(1.0, 0, 0)),
        VectorRecord(id="nan", values=(1.0, float("nan"), 0, 0)),
        VectorRecord(id="inf", values=(float("inf"), 0, 0, 0)),
    ],
    ids=[
        "metadata over 40 KB",
        "id over 512",
        "non-ASCII id",
        "all-zero",
        "mixed dimensions",
        "NaN",
        "infinity",
    ],
)
async def test_a_record_over_a_limit_stops_the_whole_upsert_before_sending(
    index: PineconeVectorIndex, standin: PineconeStandIn, oversize: VectorRecord
) -> None:
    with pytest.raises(InvalidRequestError):
        await index.upsert([*records(5), oversize], NS)
    assert standin.requests == []


async def test_a_non_finite_query_never_leaves_the_process(
    index: PineconeVectorIndex, standin: PineconeStandIn
) -> None:
    await index.upsert(records(1), NS)
    standin.clear_log()
    with pytest.raises(InvalidRequestError) as refused:
        await index.query([1, float("nan"), 0, 0], top_k=1, namespace=NS)
    assert refused.value.field == "vector"
    assert standin.requests == []


async def test_the_standin_refuses_non_finite_values_as_pinecone_does(
    standin: PineconeStandIn,
) -> None:
    async with AsyncIndex(host=standin.url, api_key=standin.api_key) as sdk:
        await sdk.upsert(vectors=[{"id": "fine", "values": [1, 0, 0, 0]}], namespace=NS)
        with pytest.raises(ApiError, match="finite") as refused:
            await sdk.upsert(vectors=[{"id": "nan", "values": [1, math.nan, 0, 0]}], namespace=NS)
        assert refused.value.status_code == 400
        with pytest.raises(ApiError, match="finite"):
            await sdk.query(top_k=1, vector=[math.inf, 0, 0, 0], namespace=NS)
        found = await sdk.query(top_k=5, vector=[1, 0, 0, 0], namespace=NS)
    assert [match.id for match in found.matches] == ["fine"]
    assert [request.body["vectors"][0]["values"][1] for request in standin.requests[1:2]] == [None]


async def test_deletes_send_at_most_1000_ids(
    index: PineconeVectorIndex, standin: PineconeStandIn
) -> None:
    await index.upsert(records(2200), NS)
    await index.delete(namespace=NS, ids=[f"rec-{n:05d}" for n in range(2100)])
    deletes = standin.requests_to("/vectors/delete")
    assert sorted(len(request.body["ids"]) for request in deletes) == [100, 1000, 1000]
    assert {request.body["namespace"] for request in deletes} == {NS}
    assert (await index.stats()).namespaces[NS].vector_count == 100


async def test_fetches_send_each_id_once_and_at_most_1000_a_request(
    index: PineconeVectorIndex, standin: PineconeStandIn
) -> None:
    await index.upsert(records(3, domain="plant_diseases"), NS)
    wanted = [f"rec-{n:05d}" for n in range(2100)]
    fetched = await index.fetch([*wanted, *wanted[:50]], NS)
    assert sorted(fetched) == wanted[:3]
    assert fetched["rec-00001"].metadata == {"domain": "plant_diseases"}
    fetches = standin.requests_to("/vectors/fetch")
    assert sorted(len(request.params["ids"]) for request in fetches) == [100, 1000, 1000]
    assert sorted(i for request in fetches for i in request.params["ids"]) == wanted
    assert {request.params["namespace"][0] for request in fetches} == {NS}


async def test_fetches_of_long_ids_stay_within_the_url_limit(
    index: PineconeVectorIndex, standin: PineconeStandIn
) -> None:
    chunk_ids = [f"{'d' * 128}#{n:04d}-{n:016x}" for n in range(MAX_FETCH_IDS)]
    await index.upsert([VectorRecord(id=i, values=(1.0, 0, 0, 0)) for i in chunk_ids[:2]], NS)
    fetched = await index.fetch(chunk_ids, NS)
    assert sorted(fetched) == chunk_ids[:2]
    fetches = standin.requests_to("/vectors/fetch")
    assert len(fetches) > 1
    assert all(
        len(urlencode(request.params, doseq=True)) <= MAX_FETCH_QUERY_CHARS for request in fetches
    )
    assert sorted(i for request in fetches for i in request.params["ids"]) == chunk_ids


async def test_a_fetch_of_no_ids_sends_nothing(
    index: PineconeVectorIndex, standin: PineconeStandIn
) -> None:
    assert await index.fetch([], NS) == {}
    assert standin.requests == []


async def test_an_id_pinecone_cannot_hold_stops_the_whole_fetch_before_sending(
    index: PineconeVectorIndex, standin: PineconeStandIn
) -> None:
    ids = [f"rec-{n:05d}" for n in range(1500)]
    with pytest.raises(InvalidRequestError):
        await index.fetch([*ids, "thé"], NS)
    assert standin.requests == []


async def test_a_fetch_answered_404_is_empty_only_in_a_missing_namespace(
    index: PineconeVectorIndex, standin: PineconeStandIn
) -> None:
    standin.inject(Fault(status=404))
    assert await index.fetch(["rec-00000"], NS) == {}
    await index.upsert(records(1), NS)
    standin.inject(Fault(status=404))
    with pytest.raises(IndexNotFoundError):
        await index.fetch(["rec-00000"], NS)


async def test_delete_by_filter_sends_the_filter_as_asked(
    index: PineconeVectorIndex, standin: PineconeStandIn
) -> None:
    await index.upsert(records(3, domain="plant_diseases"), NS)
    await index.delete(namespace=NS, filter={"domain": {"$eq": "plant_diseases"}})
    sent = standin.requests_to("/vectors/delete")[-1].body
    assert sent == {"namespace": NS, "filter": {"domain": {"$eq": "plant_diseases"}}}


async def test_passages_go_in_batches_of_at_most_96(
    embedder: PineconeInferenceEmbedder, standin: PineconeStandIn
) -> None:
    vectors = await embedder.embed_passages([f"passage number {n}" for n in range(250)])
    assert vectors.shape == (250, 1024)
    embeds = standin.requests_to("/embed")
    assert sorted(len(request.body["inputs"]) for request in embeds) == [58, 96, 96]
    assert {request.body["parameters"]["input_type"] for request in embeds} == {"passage"}
    assert {request.body["parameters"]["truncate"] for request in embeds} == {"END"}
    assert {request.body["model"] for request in embeds} == {"multilingual-e5-large"}


async def test_a_query_is_embedded_as_a_query(
    embedder: PineconeInferenceEmbedder, standin: PineconeStandIn
) -> None:
    await embedder.embed_query("what causes blister blight?")
    sent = standin.requests_to("/embed")[-1].body
    assert sent["inputs"] == [{"text": "what causes blister blight?"}]
    assert sent["parameters"] == {"input_type": "query", "truncate": "END"}


async def test_long_inputs_are_truncated_not_refused(embedder: PineconeInferenceEmbedder) -> None:
    vector = await embedder.embed_query("tea " * 2000)
    assert vector.shape == (1024,)


def test_a_batch_above_96_is_refused(connection: PineconeConnection) -> None:
    with pytest.raises(ValueError, match="96"):
        PineconeInferenceEmbedder(connection, batch_size=97)


async def test_the_standin_serves_fetch_and_list_as_the_sdk_reads_them(
    index: PineconeVectorIndex, standin: PineconeStandIn
) -> None:
    await index.upsert(records(5, domain="plant_diseases"), NS)
    async with AsyncIndex(host=standin.url, api_key=standin.api_key) as sdk:
        fetched = await sdk.fetch(ids=["rec-00001", "missing"], namespace=NS)
        first = await sdk.list_paginated(prefix="rec-", limit=3, namespace=NS)
        assert first.pagination is not None
        rest = await sdk.list_paginated(
            prefix="rec-", limit=3, pagination_token=first.pagination.next, namespace=NS
        )
    assert list(fetched.vectors) == ["rec-00001"]
    assert fetched.vectors["rec-00001"].metadata == {"domain": "plant_diseases"}
    assert [item.id for item in [*first.vectors, *rest.vectors]] == [
        f"rec-{n:05d}" for n in range(5)
    ]
    assert rest.pagination is None


async def test_listing_asks_for_pages_of_100_and_follows_the_token(
    index: PineconeVectorIndex, standin: PineconeStandIn
) -> None:
    await index.upsert(records(250), NS)
    await index.upsert(records(3), "elsewhere")
    standin.clear_log()
    pages = [page async for page in index.list_ids(NS, prefix="rec-")]
    assert [len(page) for page in pages] == [100, 100, 50]
    assert [name for page in pages for name in page] == [f"rec-{n:05d}" for n in range(250)]
    sent = [request.params for request in standin.requests_to("/vectors/list")]
    assert [(params["namespace"], params["prefix"], params["limit"]) for params in sent] == [
        ([NS], ["rec-"], ["100"])
    ] * 3
    assert ["paginationToken" in params for params in sent] == [False, True, True]


async def test_an_empty_last_page_ends_the_listing(
    index: PineconeVectorIndex, standin: PineconeStandIn
) -> None:
    await index.upsert(records(200), NS)
    standin.clear_log()
    assert [len(page) async for page in index.list_ids(NS)] == [100, 100]
    assert len(standin.requests_to("/vectors/list")) == 3


async def test_the_standin_refuses_a_token_of_another_listing(standin: PineconeStandIn) -> None:
    async with AsyncIndex(host=standin.url, api_key=standin.api_key) as sdk:
        await sdk.upsert(vectors=[{"id": f"rec-{n}", "values": [1, 0, 0, 0]} for n in range(3)])
        first = await sdk.list_paginated(prefix="rec-", limit=2)
        assert first.pagination is not None
        with pytest.raises(ApiError, match="another listing"):
            await sdk.list_paginated(prefix="other-", pagination_token=first.pagination.next)
        with pytest.raises(ApiError, match="invalid pagination token"):
            await sdk.list_paginated(pagination_token="not a token")
