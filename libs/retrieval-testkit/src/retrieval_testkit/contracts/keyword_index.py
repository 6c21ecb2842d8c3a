"""What every KeywordIndex must do. Subclass and provide an ``index`` fixture (empty index).

Scores differ between indexes (BM25, learned or hashed sparse weights), so only what any
lexical index does is asserted, on clear-cut cases. Queries use the very words of the texts
and no stopwords, so neither stemming nor a stopword list changes an outcome.
"""

from __future__ import annotations

import pytest

from retrieval.domain.keywords import KeywordRecord
from retrieval.errors import InvalidFilterError, InvalidRequestError
from retrieval.ports.keyword_index import KeywordIndex
from retrieval.ports.vector_index import LIST_PAGE_SIZE
from retrieval_testkit.contracts.provenance import (
    FILTERED,
    TEXT,
    provenance_filter,
    sourced_metadata,
)

NS = "contract"


def record(record_id: str, text: str, **metadata: object) -> KeywordRecord:
    return KeywordRecord(id=record_id, text=text, metadata=metadata)


CORPUS = [
    record(
        "a",
        "blister blight fungus attacks young tea leaves",
        domain="plant_diseases",
        year=2019,
        tags=["fungal", "leaf"],
    ),
    record(
        "b",
        "organic tea gardens use compost mulch",
        domain="tea_cultivation",
        year=2021,
        organic=True,
    ),
    record(
        "c",
        "frost damages tea bushes during cold winter nights",
        domain="weather_patterns",
        year=2023,
        tags=["frost"],
    ),
    record(
        "d",
        "copper fungicide controls blister blight",
        domain="plant_diseases",
        year=2024.5,
        organic=False,
    ),
    record("e", "grading black tea by leaf size", domain="quality_standards"),
]
EVERY_RECORD = "tea blight"
"""A query every record of ``CORPUS`` shares a word with."""


async def ids(
    index: KeywordIndex, text: str, flt: dict | None = None, *, top_k: int = 10, ns: str = NS
) -> list[str]:
    return [match.id for match in await index.query(text, top_k=top_k, namespace=ns, filter=flt)]


async def pages(index: KeywordIndex, namespace: str = NS, prefix: str | None = None) -> list:
    return [page async for page in index.list_ids(namespace, prefix=prefix)]


class KeywordIndexContract:
    @pytest.fixture
    async def seeded(self, index: KeywordIndex) -> KeywordIndex:
        assert await index.upsert(CORPUS, namespace=NS) == len(CORPUS)
        return index

    async def test_records_sharing_a_word_are_found_and_no_other(
        self, seeded: KeywordIndex
    ) -> None:
        assert await ids(seeded, "compost") == ["b"]
        assert sorted(await ids(seeded, "frost fungicide")) == ["c", "d"]
        assert await ids(seeded, "volcano") == []

    async def test_more_shared_words_rank_higher(self, seeded: KeywordIndex) -> None:
        assert await ids(seeded, "blister blight fungus") == ["a", "d"]

    async def test_scores_are_positive_and_best_first(self, seeded: KeywordIndex) -> None:
        found = await seeded.query("tea blister fungus winter", top_k=10, namespace=NS)
        scores = [match.score for match in found]
        assert len(found) == len(CORPUS)
        assert all(score > 0 for score in scores)
        assert scores == sorted(scores, reverse=True)

    async def test_ties_are_ordered_by_id(self, index: KeywordIndex) -> None:
        await index.upsert([record(i, "green tea harvest") for i in ["t2", "t3", "t1"]], NS)
        found = await index.query("harvest", top_k=10, namespace=NS)
        assert [match.id for match in found] == ["t1", "t2", "t3"]
        assert len({match.score for match in found}) == 1

    async def test_top_k_is_respected(self, seeded: KeywordIndex) -> None:
        everything = await ids(seeded, EVERY_RECORD)
        assert await ids(seeded, EVERY_RECORD, top_k=2) == everything[:2]
        assert await ids(seeded, EVERY_RECORD, top_k=1) == everything[:1]

    async def test_top_k_below_one_is_rejected(self, seeded: KeywordIndex) -> None:
        with pytest.raises(InvalidRequestError):
            await seeded.query("tea", top_k=0, namespace=NS)

    @pytest.mark.parametrize(
        ("flt", "expected"),
        [
            ({"domain": {"$in": ["plant_diseases", "weather_patterns"]}}, ["a", "c", "d"]),
            ({"domain": "tea_cultivation"}, ["b"]),
            ({"domain": {"$eq": "quality_standards"}}, ["e"]),
            ({"domain": {"$ne": "plant_diseases"}}, ["b", "c", "e"]),
            ({"year": {"$gte": 2021}}, ["b", "c", "d"]),
            ({"year": {"$gt": 2021, "$lt": 2024}}, ["c"]),
            ({"tags": {"$in": ["leaf", "frost"]}}, ["a", "c"]),
            ({"organic": True}, ["b"]),
            ({"$and": [{"domain": "plant_diseases"}, {"year": {"$lt": 2020}}]}, ["a"]),
            ({"$or": [{"domain": "weather_patterns"}, {"organic": False}]}, ["c", "d"]),
            ({"domain": "regional_context"}, []),
        ],
    )
    async def test_metadata_filters_restrict_results(
        self, seeded: KeywordIndex, flt: dict, expected: list
    ) -> None:
        assert sorted(await ids(seeded, EVERY_RECORD, flt)) == expected

    @pytest.mark.parametrize(("fields", "expected"), FILTERED)
    async def test_source_prefix_and_section_filters(
        self, index: KeywordIndex, fields: dict, expected: list
    ) -> None:
        sourced = [
            KeywordRecord(id=chunk_id, text=TEXT, metadata=metadata)
            for chunk_id, metadata in sourced_metadata().items()
        ]
        await index.upsert(sourced, namespace=NS)
        assert sorted(await ids(index, TEXT, provenance_filter(fields))) == expected

    async def test_a_filter_never_adds_a_record_without_shared_words(
        self, seeded: KeywordIndex
    ) -> None:
        assert await ids(seeded, "compost", {"domain": "plant_diseases"}) == []

    @pytest.mark.parametrize(
        "flt",
        [
            {"domain": {"$regex": "plant"}},
            {"$not": {"domain": "x"}},
            {"year": {"$gt": "2020"}},
            {"domain": {"$in": "plant_diseases"}},
            {"$or": []},
            {"domain": {}},
        ],
    )
    async def test_malformed_filters_raise(self, seeded: KeywordIndex, flt: dict) -> None:
        with pytest.raises(InvalidFilterError):
            await seeded.query("tea", top_k=3, namespace=NS, filter=flt)

    async def test_namespaces_are_isolated(self, seeded: KeywordIndex) -> None:
        await seeded.upsert([record("x", "compost tea")], namespace="other")
        assert await ids(seeded, "compost", ns="other") == ["x"]
        assert await ids(seeded, "compost") == ["b"]

    async def test_an_unknown_namespace_finds_nothing(self, seeded: KeywordIndex) -> None:
        assert await ids(seeded, "tea", ns="never-written") == []
        assert await seeded.count("never-written") == 0

    async def test_upsert_replaces_the_text_of_an_id(self, seeded: KeywordIndex) -> None:
        await seeded.upsert([record("c", "copper kettle", domain="regional_context")], NS)
        assert await ids(seeded, "frost") == []
        assert await ids(seeded, "kettle") == ["c"]
        assert await ids(seeded, "copper", {"domain": "regional_context"}) == ["c"]
        assert await seeded.count(NS) == len(CORPUS)

    async def test_count_per_namespace(self, seeded: KeywordIndex) -> None:
        await seeded.upsert([record("x", "compost")], namespace="other")
        assert await seeded.count(NS) == len(CORPUS)
        assert await seeded.count("other") == 1

    async def test_delete_by_ids(self, seeded: KeywordIndex) -> None:
        await seeded.delete(namespace=NS, ids=["a", "b", "not-there"])
        assert sorted(await ids(seeded, EVERY_RECORD)) == ["c", "d", "e"]
        assert await seeded.count(NS) == 3

    async def test_delete_all_empties_one_namespace(self, seeded: KeywordIndex) -> None:
        await seeded.upsert([record("x", "compost tea")], namespace="other")
        await seeded.delete(namespace=NS, delete_all=True)
        assert await seeded.count(NS) == 0
        assert await ids(seeded, EVERY_RECORD) == []
        assert await pages(seeded) == []
        assert await ids(seeded, "tea", ns="other") == ["x"]

    async def test_delete_in_an_unknown_namespace_is_not_an_error(
        self, index: KeywordIndex
    ) -> None:
        await index.delete(namespace="never-written", ids=["a"])
        await index.delete(namespace="never-written", delete_all=True)
        assert await index.count("never-written") == 0

    @pytest.mark.parametrize("selector", [{}, {"ids": ["a"], "delete_all": True}])
    async def test_a_delete_names_ids_or_everything(
        self, seeded: KeywordIndex, selector: dict
    ) -> None:
        with pytest.raises(InvalidRequestError):
            await seeded.delete(namespace=NS, **selector)
        assert await seeded.count(NS) == len(CORPUS)

    async def test_list_ids_lists_every_id_in_order(self, seeded: KeywordIndex) -> None:
        assert await pages(seeded) == [["a", "b", "c", "d", "e"]]

    async def test_list_ids_with_a_prefix(self, index: KeywordIndex) -> None:
        names = ["doc-1#0", "doc-1#1", "doc-10#0", "doc-2#0", "xdoc-1#0"]
        await index.upsert([record(name, "tea") for name in names], namespace=NS)
        assert await pages(index, prefix="doc-1#") == [["doc-1#0", "doc-1#1"]]
        assert await pages(index, prefix="doc-1") == [["doc-1#0", "doc-1#1", "doc-10#0"]]
        assert await pages(index, prefix="nothing") == []

    async def test_list_ids_pages_a_large_namespace(self, index: KeywordIndex) -> None:
        names = [f"r{n:04d}" for n in range(2 * LIST_PAGE_SIZE + 50)]
        await index.upsert([record(name, "tea") for name in names[1::2] + names[::2]], NS)
        listed = await pages(index)
        assert len(listed) >= 3
        assert all(1 <= len(page) <= LIST_PAGE_SIZE for page in listed)
        assert [name for page in listed for name in page] == names
        assert await index.count(NS) == len(names)

    async def test_deleting_listed_ids_between_pages_skips_nothing(
        self, index: KeywordIndex
    ) -> None:
        names = [f"r{n:04d}" for n in range(LIST_PAGE_SIZE + 30)]
        await index.upsert([record(name, "tea") for name in names], namespace=NS)
        listed: list[str] = []
        async for page in index.list_ids(NS):
            listed.extend(page)
            await index.delete(namespace=NS, ids=page)
        assert listed == names
        assert await index.count(NS) == 0

    async def test_list_ids_of_an_unknown_namespace_is_empty(self, seeded: KeywordIndex) -> None:
        assert await pages(seeded, "never-written") == []
