"""What every EmbeddingCache must do. Subclass and provide a ``cache`` fixture (empty).

Recency must follow call order: give an adapter that keeps time a ``TickingClock`` and no
minimum interval between refreshes.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from retrieval.ports.embedder import Vector
from retrieval.ports.embedding_cache import EmbeddingCache

DIMENSION = 8
MANY = 1205


def vector(seed: int) -> Vector:
    return np.random.default_rng(seed).standard_normal(DIMENSION).astype(np.float32)


class TickingClock:
    """A clock that moves one second forward every time it is read, starting now."""

    def __init__(self) -> None:
        self._now = datetime.now(UTC)

    def __call__(self) -> datetime:
        self._now += timedelta(seconds=1)
        return self._now


class EmbeddingCacheContract:
    async def test_stored_vectors_come_back_exactly(self, cache: EmbeddingCache) -> None:
        await cache.put_many({"a": vector(1), "b": vector(2)})
        found = await cache.get_many(["b", "missing", "a", "b"])
        assert set(found) == {"a", "b"}
        for key, seed in (("a", 1), ("b", 2)):
            assert found[key].dtype == np.float32
            assert found[key].shape == (DIMENSION,)
            assert np.array_equal(found[key], vector(seed))

    async def test_get_many_of_nothing_is_empty(self, cache: EmbeddingCache) -> None:
        assert await cache.get_many([]) == {}

    async def test_put_replaces_a_vector(self, cache: EmbeddingCache) -> None:
        await cache.put_many({"a": vector(1)})
        await cache.put_many({"a": vector(2)})
        assert np.array_equal((await cache.get_many(["a"]))["a"], vector(2))

    async def test_returned_vectors_belong_to_the_caller(self, cache: EmbeddingCache) -> None:
        await cache.put_many({"a": vector(1)})
        (await cache.get_many(["a"]))["a"][:] = 0
        assert np.array_equal((await cache.get_many(["a"]))["a"], vector(1))

    async def test_many_entries_round_trip(self, cache: EmbeddingCache) -> None:
        await cache.put_many({f"k{seed}": vector(seed) for seed in range(MANY)})
        found = await cache.get_many([f"k{seed}" for seed in range(MANY)])
        assert len(found) == MANY
        assert all(np.array_equal(found[f"k{seed}"], vector(seed)) for seed in (0, 999, MANY - 1))

    async def test_evict_removes_the_least_recently_used(self, cache: EmbeddingCache) -> None:
        for key, seed in (("a", 1), ("b", 2), ("c", 3)):
            await cache.put_many({key: vector(seed)})
        await cache.get_many(["a"])
        assert await cache.evict(2) == 1
        assert set(await cache.get_many(["a", "b", "c"])) == {"a", "c"}

    async def test_evict_under_the_cap_removes_nothing(self, cache: EmbeddingCache) -> None:
        await cache.put_many({"a": vector(1), "b": vector(2)})
        assert await cache.evict(2) == 0
        assert set(await cache.get_many(["a", "b"])) == {"a", "b"}

    async def test_evict_far_over_the_cap(self, cache: EmbeddingCache) -> None:
        await cache.put_many({f"k{seed}": vector(seed) for seed in range(MANY)})
        await cache.put_many({"recent": vector(0)})
        assert await cache.evict(100) == MANY + 1 - 100
        found = await cache.get_many(["recent", *(f"k{seed}" for seed in range(MANY))])
        assert len(found) == 100
        assert "recent" in found

    async def test_evict_to_zero_empties_the_cache(self, cache: EmbeddingCache) -> None:
        await cache.put_many({"a": vector(1), "b": vector(2)})
        assert await cache.evict(0) == 2
        assert await cache.get_many(["a", "b"]) == {}
