"""What every ExtractionCache must do. Subclass and provide a ``cache`` fixture (empty)."""

from __future__ import annotations

from retrieval.domain.graph import Extraction, Relation
from retrieval.ports.extraction_cache import ExtractionCache

MANY = 1205

KISS = Extraction(
    names=("Kiss and Tell", "Shirley Temple", "Corliss Archer"),
    relations=(
        Relation(
            source="corliss archer",
            target="shirley temple",
            type="PORTRAYED_BY",
            description="Shirley Temple played Corliss Archer in the 1945 film.",
        ),
    ),
)
TEA = Extraction(names=("Darjeeling",))


def numbered(seed: int) -> Extraction:
    return Extraction(names=(f"Entity {seed}",))


class ExtractionCacheContract:
    async def test_stored_extractions_come_back_equal(self, cache: ExtractionCache) -> None:
        await cache.put_many({"kiss": KISS, "tea": TEA})
        assert await cache.get_many(["tea", "missing", "kiss", "tea"]) == {
            "kiss": KISS,
            "tea": TEA,
        }

    async def test_an_empty_extraction_is_a_hit(self, cache: ExtractionCache) -> None:
        await cache.put_many({"blank": Extraction()})
        assert await cache.get_many(["blank"]) == {"blank": Extraction()}

    async def test_get_many_of_nothing_is_empty(self, cache: ExtractionCache) -> None:
        assert await cache.get_many([]) == {}

    async def test_put_replaces_an_extraction(self, cache: ExtractionCache) -> None:
        await cache.put_many({"a": KISS})
        await cache.put_many({"a": TEA})
        assert await cache.get_many(["a"]) == {"a": TEA}

    async def test_many_entries_round_trip(self, cache: ExtractionCache) -> None:
        await cache.put_many({f"k{seed}": numbered(seed) for seed in range(MANY)})
        found = await cache.get_many([f"k{seed}" for seed in range(MANY)])
        assert len(found) == MANY
        assert all(found[f"k{seed}"] == numbered(seed) for seed in (0, 999, MANY - 1))
