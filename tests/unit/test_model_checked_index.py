"""A namespace answers only the embedding model that wrote it, on every index."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest

from retrieval.adapters.embedded_index.vector_index import EmbeddedVectorIndex
from retrieval.adapters.model_checked_index import ModelCheckedIndex
from retrieval.adapters.pinecone.clients import PineconeConnection
from retrieval.adapters.pinecone.freshness import PineconeLsns
from retrieval.adapters.pinecone.vector_index import PineconeVectorIndex
from retrieval.domain.metadata import MODEL_FIELD
from retrieval.domain.vectors import VectorRecord
from retrieval.errors import EmbeddingModelMismatchError, InvalidRequestError
from retrieval.ports.vector_index import VectorIndex
from retrieval_testkit import InMemoryVectorIndex
from retrieval_testkit.pinecone_standin import PineconeStandIn

NS = "tea"
RECORDS = [
    VectorRecord(id="a", values=(1.0, 0, 0, 0), metadata={"domain": "plant_diseases"}),
    VectorRecord(id="b", values=(0.0, 1, 0, 0), metadata={"domain": "weather_patterns"}),
]


@pytest.fixture(params=["exact", "in-memory", "pinecone"])
async def backend(request: pytest.FixtureRequest) -> AsyncIterator[VectorIndex]:
    if request.param == "exact":
        yield EmbeddedVectorIndex()
    elif request.param == "in-memory":
        yield InMemoryVectorIndex()
    else:
        with PineconeStandIn(dimension=4) as standin:
            index = PineconeVectorIndex(
                PineconeConnection(api_key=standin.api_key, index_host=standin.url), PineconeLsns()
            )
            yield index
            await index.close()


@pytest.fixture
def checked(backend: VectorIndex) -> Callable[..., ModelCheckedIndex]:
    def with_model(model: str = "e5-large", dimension: int = 4) -> ModelCheckedIndex:
        return ModelCheckedIndex(backend, model=model, dimension=dimension)

    return with_model


async def test_the_writing_model_reads_its_records_without_the_marker(
    checked: Callable[..., ModelCheckedIndex],
) -> None:
    index = checked()
    await index.upsert(RECORDS, NS)
    found = await index.query([1, 0, 0, 0], top_k=2, namespace=NS)
    assert [match.id for match in found] == ["a", "b"]
    assert found[0].metadata == {"domain": "plant_diseases"}


async def test_what_a_query_returns_is_the_caller_s_to_change(
    checked: Callable[..., ModelCheckedIndex],
) -> None:
    index = checked()
    await index.upsert(
        [VectorRecord(id="t", values=(1.0, 0, 0, 0), metadata={"tags": ["leaf"], "year": 1})], NS
    )
    found = (await index.query([1, 0, 0, 0], top_k=1, namespace=NS))[0].metadata
    found["tags"].append("changed")
    found["year"] = 2
    again = (await index.query([1, 0, 0, 0], top_k=1, namespace=NS))[0].metadata
    assert again == {"tags": ["leaf"], "year": 1}


@pytest.mark.parametrize("include_metadata", [True, False])
async def test_another_model_cannot_query_the_namespace(
    checked: Callable[..., ModelCheckedIndex], include_metadata: bool
) -> None:
    await checked("e5-large").upsert(RECORDS, NS)
    with pytest.raises(EmbeddingModelMismatchError, match="e5-large@4"):
        await checked("other-model").query(
            [1, 0, 0, 0], top_k=2, namespace=NS, include_metadata=include_metadata
        )


async def test_another_model_cannot_fetch_from_the_namespace(
    checked: Callable[..., ModelCheckedIndex],
) -> None:
    await checked("e5-large").upsert(RECORDS, NS)
    fetched = await checked("e5-large").fetch(["a"], NS)
    assert fetched["a"].metadata == {"domain": "plant_diseases"}
    with pytest.raises(EmbeddingModelMismatchError, match="e5-large@4"):
        await checked("other-model").fetch(["a"], NS)


async def test_another_model_cannot_write_the_namespace(
    checked: Callable[..., ModelCheckedIndex], backend: VectorIndex
) -> None:
    await checked("e5-large").upsert(RECORDS, NS)
    extra = VectorRecord(id="c", values=(0.0, 0, 1, 0))
    with pytest.raises(EmbeddingModelMismatchError):
        await checked("other-model").upsert([extra], NS)
    assert (await backend.stats()).namespaces[NS].vector_count == len(RECORDS)


async def test_models_are_recorded_per_namespace(
    checked: Callable[..., ModelCheckedIndex],
) -> None:
    await checked("e5-large").upsert(RECORDS, NS)
    other = checked("other-model")
    await other.upsert(RECORDS, "elsewhere")
    assert len(await other.query([1, 0, 0, 0], top_k=2, namespace="elsewhere")) == 2


async def test_an_emptied_namespace_takes_a_new_model(
    checked: Callable[..., ModelCheckedIndex],
) -> None:
    await checked("e5-large").upsert(RECORDS, NS)
    other = checked("other-model")
    await other.delete(namespace=NS, delete_all=True)
    await other.upsert(RECORDS, NS)
    assert len(await other.query([1, 0, 0, 0], top_k=2, namespace=NS)) == 2


async def test_an_embedder_of_another_dimension_is_a_mismatch(
    checked: Callable[..., ModelCheckedIndex],
) -> None:
    await checked("e5-large", 4).upsert(RECORDS, NS)
    narrow = checked("e5-small", 3)
    with pytest.raises(EmbeddingModelMismatchError, match="dimension 4"):
        await narrow.query([1, 0, 0], top_k=1, namespace=NS)
    with pytest.raises(EmbeddingModelMismatchError):
        await narrow.upsert([VectorRecord(id="c", values=(1.0, 0, 0))], NS)


async def test_records_written_before_the_marker_are_accepted(
    checked: Callable[..., ModelCheckedIndex], backend: VectorIndex
) -> None:
    await backend.upsert(RECORDS, NS)
    index = checked()
    await index.upsert([VectorRecord(id="c", values=(0.0, 0, 1, 0))], NS)
    assert len(await index.query([1, 0, 0, 0], top_k=3, namespace=NS)) == 3


async def test_the_marker_field_is_reserved(checked: Callable[..., ModelCheckedIndex]) -> None:
    record = VectorRecord(id="a", values=(1.0, 0, 0, 0), metadata={MODEL_FIELD: "mine"})
    with pytest.raises(InvalidRequestError, match=MODEL_FIELD):
        await checked().upsert([record], NS)
