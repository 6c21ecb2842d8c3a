"""The query vector cache: a query asked again is not embedded again, within a bound."""

from __future__ import annotations

import numpy as np
import pytest

from retrieval.service.caching.query_vector_cache import QueryVectorCache
from retrieval_testkit import HashEmbedder
from retrieval_testkit.telemetry import quiet_telemetry


def cache(model: HashEmbedder, max_entries: int) -> QueryVectorCache:
    return QueryVectorCache(model, max_entries=max_entries, metrics=quiet_telemetry().metrics)


async def test_a_query_asked_again_is_answered_from_memory_with_the_same_vector() -> None:
    model = HashEmbedder()
    queries = cache(model, max_entries=10)
    first = await queries.embed_query("blister blight")
    again = await queries.embed_query("blister blight")
    other = await queries.embed_query("frost")
    assert model.queries == ["blister blight", "frost"]
    assert np.array_equal(first, again)
    assert np.array_equal(first, await HashEmbedder().embed_query("blister blight"))
    assert not np.array_equal(first, other)


async def test_lookups_are_counted() -> None:
    metrics = quiet_telemetry().metrics
    queries = QueryVectorCache(HashEmbedder(), max_entries=10, metrics=metrics)
    for text in ("a", "a", "b", "a"):
        await queries.embed_query(text)
    lookups = "retrieval_query_vector_cache_lookups_total"
    assert metrics.registry.get_sample_value(lookups, {"result": "hit"}) == 2
    assert metrics.registry.get_sample_value(lookups, {"result": "miss"}) == 2


async def test_a_cached_vector_cannot_be_changed_by_a_caller() -> None:
    queries = cache(HashEmbedder(), max_entries=10)
    vector = await queries.embed_query("frost")
    with pytest.raises(ValueError, match="read-only"):
        vector[0] = 42.0


async def test_the_least_recently_used_query_leaves_first() -> None:
    model = HashEmbedder()
    queries = cache(model, max_entries=2)
    for text in ("a", "b", "a", "c", "a", "b"):
        await queries.embed_query(text)
    assert model.queries == ["a", "b", "c", "b"]


async def test_no_entries_means_no_cache() -> None:
    model = HashEmbedder()
    queries = cache(model, max_entries=0)
    await queries.embed_query("a")
    await queries.embed_query("a")
    assert model.queries == ["a", "a"]


async def test_passages_pass_through() -> None:
    model = HashEmbedder()
    queries = cache(model, max_entries=10)
    passages = await queries.embed_passages(["one", "two"])
    assert np.array_equal(passages, await HashEmbedder().embed_passages(["one", "two"]))
    assert (queries.model, queries.dimension) == (model.model, model.dimension)
