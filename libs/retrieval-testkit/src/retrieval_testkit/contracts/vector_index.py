"""What every VectorIndex must do. Subclass and provide an ``index`` fixture (empty index)."""

from __future__ import annotations

import math

import pytest

from retrieval.domain.vectors import VectorRecord
from retrieval.errors import InvalidFilterError, InvalidRequestError, NamespaceNotFoundError
from retrieval.ports.vector_index import LIST_PAGE_SIZE, MAX_FETCH_IDS, VectorIndex
from retrieval_testkit.contracts.provenance import FILTERED, provenance_filter, sourced_metadata

NS = "contract"


def record(record_id: str, values: list[float], **metadata: object) -> VectorRecord:
    return VectorRecord(id=record_id, values=tuple(values), metadata=metadata)


CORPUS = [
    record("a", [1, 0, 0, 0], domain="plant_diseases", year=2019, tags=["fungal", "leaf"]),
    record("b", [0.9, 0.1, 0, 0], domain="tea_cultivation", year=2021, organic=True),
    record("c", [0, 1, 0, 0], domain="weather_patterns", year=2023, tags=["frost"]),
    record("d", [0, 0, 1, 0], domain="plant_diseases", year=2024.5, organic=False),
    record("e", [0.5, 0.5, 0.5, 0.5], domain="quality_standards"),
]
UNIT_LENGTH = [r for r in CORPUS if math.isclose(math.hypot(*r.values), 1.0)]
"""Records an index returns as written even if it stores vectors normalised."""
NON_FINITE = pytest.mark.parametrize(
    "bad", [math.nan, math.inf, -math.inf, 1e39], ids=["nan", "inf", "-inf", "past-float32"]
)


async def ids(index: VectorIndex, flt: dict | None = None, *, top_k: int = 10) -> list[str]:
    found = await index.query([1, 0.2, 0.1, 0], top_k=top_k, namespace=NS, filter=flt)
    return [match.id for match in found]


async def pages(index: VectorIndex, namespace: str = NS, prefix: str | None = None) -> list:
    return [page async for page in index.list_ids(namespace, prefix=prefix)]


class VectorIndexContract:
    @pytest.fixture
    async def seeded(self, index: VectorIndex) -> VectorIndex:
        assert await index.upsert(CORPUS, namespace=NS) == len(CORPUS)
        return index

    async def test_query_returns_cosine_scores_best_first(self, seeded: VectorIndex) -> None:
        found = await seeded.query([1, 0, 0, 0], top_k=3, namespace=NS)
        assert [m.id for m in found] == ["a", "b", "e"]
        assert found[0].score == pytest.approx(1.0, abs=1e-5)
        assert found[1].score == pytest.approx(0.9 / math.hypot(0.9, 0.1), abs=1e-5)
        assert found[2].score == pytest.approx(0.5, abs=1e-5)
        assert found[0].metadata["domain"] == "plant_diseases"
        assert found[0].values is None

    async def test_equal_scores_are_ordered_by_id(self, index: VectorIndex) -> None:
        await index.upsert(
            [record(i, [0, 0, 1, 0]) for i in ("t3", "t1", "t2")] + [record("u", [0, 1, 0, 0])],
            namespace=NS,
        )
        found = await index.query([0, 0.1, 1, 0], top_k=3, namespace=NS)
        assert [m.id for m in found] == ["t1", "t2", "t3"]

    async def test_scores_do_not_depend_on_vector_length(self, seeded: VectorIndex) -> None:
        found = await seeded.query([7, 0, 0, 0], top_k=1, namespace=NS)
        assert found[0].score == pytest.approx(1.0, abs=1e-5)

    async def test_include_values_returns_stored_vectors(self, seeded: VectorIndex) -> None:
        found = await seeded.query([0, 1, 0, 0], top_k=1, namespace=NS, include_values=True)
        assert found[0].id == "c"
        assert found[0].values == pytest.approx((0, 1, 0, 0))

    async def test_without_metadata_the_same_matches_come_with_none(
        self, seeded: VectorIndex
    ) -> None:
        vector, diseases = [1, 0.5, 0.2, 0], {"domain": {"$eq": "plant_diseases"}}
        for filter in (None, diseases):
            full = await seeded.query(vector, top_k=5, namespace=NS, filter=filter)
            bare = await seeded.query(
                vector, top_k=5, namespace=NS, filter=filter, include_metadata=False
            )
            assert any(match.metadata for match in full)
            assert [(m.id, m.score) for m in bare] == [(m.id, m.score) for m in full]
            assert all(match.metadata == {} for match in bare)
            with pytest.raises(TypeError):
                bare[0].metadata["domain"] = "changed"

    async def test_what_fetch_returns_shares_nothing_with_the_index(
        self, seeded: VectorIndex
    ) -> None:
        metadata = (await seeded.fetch(["a"], NS))["a"].metadata
        metadata["tags"].append("changed")
        metadata["domain"] = "changed"
        again = (await seeded.fetch(["a"], NS))["a"].metadata
        assert (again["domain"], again["tags"]) == ("plant_diseases", ["fungal", "leaf"])
        assert await ids(seeded, {"domain": "plant_diseases"}) == ["a", "d"]

    async def test_top_k_larger_than_namespace_returns_everything(
        self, seeded: VectorIndex
    ) -> None:
        assert sorted(await ids(seeded, top_k=50)) == ["a", "b", "c", "d", "e"]

    async def test_namespaces_are_isolated(self, seeded: VectorIndex) -> None:
        await seeded.upsert([record("x", [1, 0, 0, 0], domain="plant_diseases")], namespace="other")
        found = await seeded.query([1, 0, 0, 0], top_k=10, namespace="other")
        assert [m.id for m in found] == ["x"]
        assert "x" not in await ids(seeded)

    async def test_upsert_overwrites_by_id(self, seeded: VectorIndex) -> None:
        await seeded.upsert([record("c", [1, 0, 0, 0], domain="regional_context")], namespace=NS)
        found = await seeded.query([1, 0, 0, 0], top_k=2, namespace=NS)
        assert {m.id for m in found} == {"a", "c"}
        assert next(m for m in found if m.id == "c").metadata == {"domain": "regional_context"}
        assert (await seeded.stats()).namespaces[NS].vector_count == len(CORPUS)

    async def test_stats_count_per_namespace(self, seeded: VectorIndex) -> None:
        await seeded.upsert([record("x", [0, 0, 0, 1])], namespace="other")
        stats = await seeded.stats()
        assert stats.dimension == 4
        assert stats.namespaces[NS].vector_count == 5
        assert stats.namespaces["other"].vector_count == 1
        assert stats.total_vector_count == 6

    async def test_missing_namespace_is_a_typed_error(self, seeded: VectorIndex) -> None:
        with pytest.raises(NamespaceNotFoundError):
            await seeded.query([1, 0, 0, 0], top_k=1, namespace="never-written")

    @NON_FINITE
    async def test_non_finite_values_are_refused_before_anything_is_written(
        self, seeded: VectorIndex, bad: float
    ) -> None:
        fine = record("z", [0, 0, 0, 1])
        broken = VectorRecord.model_construct(id="broken", values=(1.0, bad, 0.0, 0.0), metadata={})
        with pytest.raises(InvalidRequestError) as refused:
            await seeded.upsert([fine, broken], namespace=NS)
        assert refused.value.field == "values"
        assert "'broken'" in str(refused.value)
        assert await seeded.fetch(["z", "broken"], namespace=NS) == {}
        assert sorted(await ids(seeded)) == ["a", "b", "c", "d", "e"]

    @NON_FINITE
    async def test_a_non_finite_query_is_refused(self, seeded: VectorIndex, bad: float) -> None:
        with pytest.raises(InvalidRequestError) as refused:
            await seeded.query([1, bad, 0, 0], top_k=1, namespace=NS)
        assert refused.value.field == "vector"

    async def test_dimension_mismatch_is_rejected(self, seeded: VectorIndex) -> None:
        with pytest.raises(InvalidRequestError):
            await seeded.upsert([record("z", [1, 0, 0])], namespace=NS)
        assert (await seeded.stats()).namespaces[NS].vector_count == len(CORPUS)

    @pytest.mark.parametrize(
        ("flt", "expected"),
        [
            ({"domain": {"$in": ["plant_diseases"]}}, ["a", "d"]),
            ({"domain": "tea_cultivation"}, ["b"]),
            ({"domain": {"$eq": "tea_cultivation"}}, ["b"]),
            ({"domain": {"$ne": "plant_diseases"}}, ["b", "c", "e"]),
            ({"domain": {"$nin": ["plant_diseases", "weather_patterns"]}}, ["b", "e"]),
            ({"year": {"$gte": 2021}}, ["b", "c", "d"]),
            ({"year": {"$gt": 2021, "$lt": 2024}}, ["c"]),
            ({"year": {"$lte": 2019}}, ["a"]),
            ({"year": {"$exists": False}}, ["e"]),
            ({"organic": True}, ["b"]),
            ({"organic": {"$exists": True}}, ["b", "d"]),
            ({"tags": "frost"}, ["c"]),
            ({"tags": {"$in": ["leaf", "frost"]}}, ["a", "c"]),
            ({"tags": {"$nin": ["leaf"]}}, ["b", "c", "d", "e"]),
            ({"domain": "plant_diseases", "year": {"$gt": 2020}}, ["d"]),
            ({"$and": [{"domain": "plant_diseases"}, {"year": {"$lt": 2020}}]}, ["a"]),
            ({"$or": [{"domain": "weather_patterns"}, {"organic": False}]}, ["c", "d"]),
            ({"year": 2019}, ["a"]),
            ({"year": "2019"}, []),
        ],
    )
    async def test_metadata_filters(self, seeded: VectorIndex, flt: dict, expected: list) -> None:
        assert sorted(await ids(seeded, flt)) == expected

    @pytest.mark.parametrize(
        "flt",
        [
            {"domain": {"$regex": "plant"}},
            {"$not": {"domain": "x"}},
            {"year": {"$gt": "2020"}},
            {"domain": {"$in": "plant_diseases"}},
            {"$or": []},
            {"organic": {"$exists": "yes"}},
            {"domain": {}},
            {"domain": {"$in": [f"d{n}" for n in range(10_001)]}},
        ],
        ids=lambda flt: str(flt)[:40],
    )
    async def test_malformed_filters_raise(self, seeded: VectorIndex, flt: dict) -> None:
        with pytest.raises(InvalidFilterError):
            await seeded.query([1, 0, 0, 0], top_k=3, namespace=NS, filter=flt)

    @pytest.mark.parametrize(("fields", "expected"), FILTERED)
    async def test_source_prefix_and_section_filters(
        self, index: VectorIndex, fields: dict, expected: list
    ) -> None:
        sourced = [
            VectorRecord(id=chunk_id, values=(1, 0.1 * n, 0, 0), metadata=metadata)
            for n, (chunk_id, metadata) in enumerate(sourced_metadata().items())
        ]
        await index.upsert(sourced, namespace=NS)
        assert sorted(await ids(index, provenance_filter(fields))) == expected

    async def test_fetch_returns_values_and_metadata_as_upserted(self, seeded: VectorIndex) -> None:
        fetched = await seeded.fetch([r.id for r in UNIT_LENGTH], namespace=NS)
        assert sorted(fetched) == sorted(r.id for r in UNIT_LENGTH)
        for upserted in UNIT_LENGTH:
            assert fetched[upserted.id].id == upserted.id
            assert fetched[upserted.id].values == pytest.approx(upserted.values, abs=1e-6)
            assert fetched[upserted.id].metadata == upserted.metadata

    async def test_fetch_returns_the_values_query_returns(self, seeded: VectorIndex) -> None:
        found = await seeded.query(
            [1, 0, 0, 0], top_k=len(CORPUS), namespace=NS, include_values=True
        )
        fetched = await seeded.fetch([m.id for m in found], namespace=NS)
        assert sorted(fetched) == sorted(m.id for m in found)
        for match in found:
            assert fetched[match.id].values == pytest.approx(match.values, abs=1e-6)
            assert fetched[match.id].metadata == match.metadata

    async def test_fetch_leaves_out_unknown_ids(self, seeded: VectorIndex) -> None:
        fetched = await seeded.fetch(["a", "not-there", "a"], namespace=NS)
        assert list(fetched) == ["a"]

    async def test_fetch_reads_one_namespace(self, seeded: VectorIndex) -> None:
        await seeded.upsert([record("x", [0, 0, 0, 1])], namespace="other")
        assert list(await seeded.fetch(["a", "x"], namespace="other")) == ["x"]
        assert await seeded.fetch(["a", "x"], namespace="never-written") == {}

    async def test_fetch_of_no_ids_is_empty(self, seeded: VectorIndex) -> None:
        assert await seeded.fetch([], namespace=NS) == {}

    async def test_fetch_takes_more_ids_than_one_request_holds(self, seeded: VectorIndex) -> None:
        absent = [f"not-there-{n:04d}" for n in range(MAX_FETCH_IDS)]
        fetched = await seeded.fetch(["a", *absent, "e"], namespace=NS)
        assert sorted(fetched) == ["a", "e"]

    async def test_delete_by_ids(self, seeded: VectorIndex) -> None:
        await seeded.delete(namespace=NS, ids=["a", "b", "not-there"])
        assert sorted(await ids(seeded)) == ["c", "d", "e"]

    async def test_delete_by_filter(self, seeded: VectorIndex) -> None:
        await seeded.delete(namespace=NS, filter={"domain": "plant_diseases"})
        assert sorted(await ids(seeded)) == ["b", "c", "e"]

    async def test_delete_all_removes_the_namespace(self, seeded: VectorIndex) -> None:
        await seeded.upsert([record("x", [0, 0, 0, 1])], namespace="other")
        await seeded.delete(namespace=NS, delete_all=True)
        stats = await seeded.stats()
        assert NS not in stats.namespaces
        assert stats.namespaces["other"].vector_count == 1
        with pytest.raises(NamespaceNotFoundError):
            await seeded.query([1, 0, 0, 0], top_k=1, namespace=NS)

    @pytest.mark.parametrize(
        "selector",
        [{}, {"ids": ["a"], "delete_all": True}, {"filter": {}}, {"filter": {"a": {"$bad": 1}}}],
    )
    async def test_a_delete_must_name_one_valid_selector(
        self, seeded: VectorIndex, selector: dict
    ) -> None:
        with pytest.raises(InvalidFilterError):
            await seeded.delete(namespace=NS, **selector)
        assert (await seeded.stats()).namespaces[NS].vector_count == len(CORPUS)

    async def test_delete_in_missing_namespace_is_not_an_error(self, index: VectorIndex) -> None:
        await index.delete(namespace="never-written", ids=["a"])
        assert (await index.stats()).total_vector_count == 0

    async def test_list_ids_lists_every_id_in_order(self, seeded: VectorIndex) -> None:
        assert await pages(seeded) == [["a", "b", "c", "d", "e"]]

    async def test_list_ids_with_a_prefix(self, index: VectorIndex) -> None:
        names = ["doc-1#0", "doc-1#1", "doc-10#0", "doc-2#0", "xdoc-1#0"]
        await index.upsert([record(name, [1, 1, 0, 0]) for name in names], namespace=NS)
        assert await pages(index, prefix="doc-1#") == [["doc-1#0", "doc-1#1"]]
        assert await pages(index, prefix="doc-1") == [["doc-1#0", "doc-1#1", "doc-10#0"]]
        assert await pages(index, prefix="nothing") == []

    async def test_list_ids_pages_a_large_namespace(self, index: VectorIndex) -> None:
        names = [f"r{n:04d}" for n in range(2 * LIST_PAGE_SIZE + 50)]
        shuffled = names[1::2] + names[::2]
        await index.upsert([record(name, [1, 0, 0, 1]) for name in shuffled], namespace=NS)
        listed = await pages(index)
        assert len(listed) >= 3
        assert all(1 <= len(page) <= LIST_PAGE_SIZE for page in listed)
        assert [name for page in listed for name in page] == names

    async def test_deleting_listed_ids_between_pages_skips_nothing(
        self, index: VectorIndex
    ) -> None:
        names = [f"r{n:04d}" for n in range(LIST_PAGE_SIZE + 30)]
        await index.upsert([record(name, [0, 1, 0, 1]) for name in names], namespace=NS)
        listed: list[str] = []
        async for page in index.list_ids(NS):
            listed.extend(page)
            await index.delete(namespace=NS, ids=page)
        assert listed == names
        assert NS not in (await index.stats()).namespaces

    async def test_list_ids_of_an_unknown_namespace_is_empty(self, seeded: VectorIndex) -> None:
        assert await pages(seeded, "never-written") == []

    async def test_list_ids_keeps_namespaces_apart(self, seeded: VectorIndex) -> None:
        await seeded.upsert([record("x", [0, 0, 0, 1]), record("a", [0, 1, 0, 0])], "other")
        await seeded.delete(namespace=NS, ids=["b"])
        assert await pages(seeded, "other") == [["a", "x"]]
        assert await pages(seeded) == [["a", "c", "d", "e"]]
