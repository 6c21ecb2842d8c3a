"""CachingEmbedder over HashEmbedder, which records every text it embeds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pytest
from structlog.testing import capture_logs

from retrieval.domain.embedding_keys import InputType, embedding_key
from retrieval.errors import BackendUnavailableError, EmbeddingModelMismatchError
from retrieval.ports.embedder import Vector
from retrieval.service.caching.caching_embedder import CachingEmbedder
from retrieval_testkit import HashEmbedder, InMemoryEmbeddingCache

PASSAGES = ["green tea withers", "black tea ferments", "oolong sits between"]


class LookupsFail(InMemoryEmbeddingCache):
    async def get_many(self, keys: Sequence[str]) -> dict[str, Vector]:
        raise BackendUnavailableError("MongoDB unreachable during find")


class WritesFail(InMemoryEmbeddingCache):
    async def put_many(self, entries: Mapping[str, Vector]) -> None:
        raise BackendUnavailableError("MongoDB unreachable during upsert")


class MisdeclaredEmbedder(HashEmbedder):
    """Declares 8 dimensions and makes 16."""

    @property
    def dimension(self) -> int:
        return 8


def caching(
    inner: HashEmbedder, cache: InMemoryEmbeddingCache, max_entries: int = 100
) -> CachingEmbedder:
    return CachingEmbedder(inner, cache, max_entries=max_entries)


async def uncached_vectors(texts: Sequence[str], **hash_options) -> np.ndarray:
    return await HashEmbedder(**hash_options).embed_passages(texts)


async def test_a_second_call_for_the_same_texts_embeds_nothing() -> None:
    inner = HashEmbedder()
    embedder = caching(inner, InMemoryEmbeddingCache())
    first = await embedder.embed_passages(PASSAGES)
    second = await embedder.embed_passages(PASSAGES)
    assert inner.passages == PASSAGES
    assert np.array_equal(first, await uncached_vectors(PASSAGES))
    assert np.array_equal(second, first)
    assert second.dtype == np.float32


async def test_only_new_texts_are_embedded_and_order_is_kept() -> None:
    inner = HashEmbedder()
    embedder = caching(inner, InMemoryEmbeddingCache())
    await embedder.embed_passages(PASSAGES[:2])
    texts = [PASSAGES[1], PASSAGES[2], PASSAGES[0]]
    vectors = await embedder.embed_passages(texts)
    assert inner.passages == [*PASSAGES[:2], PASSAGES[2]]
    assert np.array_equal(vectors, await uncached_vectors(texts))


async def test_a_call_looks_the_cache_up_once() -> None:
    cache = InMemoryEmbeddingCache()
    await caching(HashEmbedder(), cache).embed_passages(PASSAGES)
    assert cache.get_many_calls == 1


@pytest.mark.parametrize(
    "other", [{"model": "other-model"}, {"dimension": 32}], ids=["model", "dimension"]
)
async def test_another_models_entries_are_never_used(other: dict) -> None:
    cache = InMemoryEmbeddingCache()
    await caching(HashEmbedder(), cache).embed_passages(PASSAGES)
    inner = HashEmbedder(**other)
    vectors = await caching(inner, cache).embed_passages(PASSAGES)
    assert inner.passages == PASSAGES
    assert np.array_equal(vectors, await uncached_vectors(PASSAGES, **other))


async def test_the_same_text_twice_in_one_call_is_embedded_once() -> None:
    inner = HashEmbedder()
    texts = [PASSAGES[0], PASSAGES[1], PASSAGES[0]]
    vectors = await caching(inner, InMemoryEmbeddingCache()).embed_passages(texts)
    assert inner.passages == PASSAGES[:2]
    assert vectors.shape == (3, inner.dimension)
    assert np.array_equal(vectors, await uncached_vectors(texts))


async def test_a_failing_lookup_degrades_to_plain_embedding() -> None:
    inner = HashEmbedder()
    with capture_logs() as logs:
        vectors = await caching(inner, LookupsFail()).embed_passages(PASSAGES)
    assert np.array_equal(vectors, await uncached_vectors(PASSAGES))
    assert inner.passages == PASSAGES
    warning = next(line for line in logs if line["event"] == "embedding_cache.lookup_failed")
    assert warning["log_level"] == "warning"
    assert "unreachable" in warning["error"]


async def test_a_failing_write_still_returns_the_vectors() -> None:
    with capture_logs() as logs:
        vectors = await caching(HashEmbedder(), WritesFail()).embed_passages(PASSAGES)
    assert np.array_equal(vectors, await uncached_vectors(PASSAGES))
    assert [line["event"] for line in logs if line["log_level"] == "warning"] == [
        "embedding_cache.store_failed"
    ]


async def test_the_cache_is_trimmed_to_its_cap_least_recently_used_first() -> None:
    inner = HashEmbedder()
    embedder = caching(inner, InMemoryEmbeddingCache(), max_entries=2)
    await embedder.embed_passages(PASSAGES)
    await embedder.embed_passages(PASSAGES[1:])
    assert inner.passages == PASSAGES
    await embedder.embed_passages(PASSAGES[:1])
    assert inner.passages == [*PASSAGES, PASSAGES[0]]


async def test_queries_pass_through_the_cache_untouched() -> None:
    inner = HashEmbedder()
    cache = InMemoryEmbeddingCache()
    vector = await caching(inner, cache).embed_query(PASSAGES[0])
    assert np.array_equal(vector, await HashEmbedder().embed_query(PASSAGES[0]))
    assert inner.queries == PASSAGES[:1]
    assert cache.get_many_calls == 0


async def test_vectors_of_an_undeclared_dimension_are_refused_and_not_stored() -> None:
    inner = MisdeclaredEmbedder(dimension=16)
    cache = InMemoryEmbeddingCache()
    with pytest.raises(EmbeddingModelMismatchError):
        await caching(inner, cache).embed_passages(PASSAGES)
    keys = [embedding_key(inner.model, 8, InputType.PASSAGE, text) for text in PASSAGES]
    assert await cache.get_many(keys) == {}
