"""What every GraphStore must do. Subclass and provide a ``store`` fixture (empty)."""

from __future__ import annotations

import pytest

from retrieval.domain.graph import GraphRecord, Relation
from retrieval.errors import InvalidFilterError, InvalidRequestError
from retrieval.ports.graph_store import ABOUT_READ, GraphStore
from retrieval.ports.vector_index import LIST_PAGE_SIZE

NS = "contract"


def record(
    record_id: str, about: str = "", *mentions: str, domain: str = "history", year: int = 1945
) -> GraphRecord:
    return GraphRecord(
        id=record_id,
        about=(about,) if about else (),
        mentions=mentions,
        metadata={"domain": domain, "year": year},
    )


KISS = record("kiss#0", "kiss and tell", "shirley temple", "corliss archer")
TEMPLE = record("temple#0", "shirley temple", "united states", domain="politics", year=1928)
ARCHER = record("archer#0", "corliss archer", "kiss and tell", "shirley temple")
ARCHER_2 = record("archer#1", "corliss archer", "janet waldo")


def ids(found: dict[str, list[GraphRecord]]) -> dict[str, list[str]]:
    return {entity: [r.id for r in records] for entity, records in found.items()}


async def listed(store: GraphStore, namespace: str = NS, prefix: str | None = None) -> list:
    return [page async for page in store.list_ids(namespace, prefix=prefix)]


class GraphStoreContract:
    @pytest.fixture
    async def filled(self, store: GraphStore) -> GraphStore:
        await store.upsert([KISS, TEMPLE, ARCHER, ARCHER_2], NS)
        return store

    async def test_an_entitys_records_come_about_it_first_then_by_id(self, filled) -> None:
        found = await filled.linked(
            ["shirley temple", "corliss archer", "nobody"], namespace=NS, per_entity=10
        )
        assert ids(found) == {
            "shirley temple": ["temple#0", "archer#0", "kiss#0"],
            "corliss archer": ["archer#0", "archer#1", "kiss#0"],
            "nobody": [],
        }
        assert found["shirley temple"][0] == TEMPLE

    async def test_at_most_per_entity_records_each(self, filled) -> None:
        found = await filled.linked(["shirley temple", "kiss and tell"], namespace=NS, per_entity=2)
        assert ids(found) == {
            "shirley temple": ["temple#0", "archer#0"],
            "kiss and tell": ["kiss#0", "archer#0"],
        }
        with pytest.raises(InvalidRequestError):
            await filled.linked(["kiss and tell"], namespace=NS, per_entity=0)

    async def test_filters_apply_before_the_limit(self, filled) -> None:
        by_domain = await filled.linked(
            ["shirley temple"],
            namespace=NS,
            per_entity=1,
            filter={"domain": {"$in": ["history"]}},
        )
        assert ids(by_domain) == {"shirley temple": ["archer#0"]}
        either = {"$or": [{"year": {"$lt": 1930}}, {"domain": {"$eq": "nothing"}}]}
        by_year = await filled.linked(["shirley temple"], namespace=NS, per_entity=5, filter=either)
        assert ids(by_year) == {"shirley temple": ["temple#0"]}
        with pytest.raises(InvalidFilterError):
            await filled.linked(["x"], namespace=NS, per_entity=1, filter={"year": {"$gt": "a"}})

    async def test_the_records_about_some_entities_come_by_id_in_the_filter(self, filled) -> None:
        found = await filled.about(["shirley temple", "corliss archer", "x"], namespace=NS)
        assert [record.id for record in found] == ["archer#0", "archer#1", "temple#0"]
        history = {"domain": {"$eq": "history"}}
        kept = await filled.about(
            ["shirley temple", "corliss archer"], namespace=NS, filter=history
        )
        assert [record.id for record in kept] == ["archer#0", "archer#1"]
        assert await filled.about(["kiss and tell"], namespace="other") == []

    async def test_records_are_read_by_chunk_id(self, filled) -> None:
        found = await filled.get_many(["temple#0", "kiss#0", "nobody#0", "kiss#0"], NS)
        assert found == {"temple#0": TEMPLE, "kiss#0": KISS}
        assert await filled.get_many(["kiss#0"], "other") == {}

    async def test_namespaces_are_apart(self, filled) -> None:
        await filled.upsert([record("other#0", "shirley temple")], "other")
        found = await filled.linked(["shirley temple"], namespace="other", per_entity=5)
        assert ids(found) == {"shirley temple": ["other#0"]}
        assert await listed(filled, "other") == [["other#0"]]

    async def test_records_are_read_back_and_overwritten(self, filled) -> None:
        found = await filled.linked(["kiss and tell"], namespace=NS, per_entity=1)
        assert found == {"kiss and tell": [KISS]}
        rewritten = record("kiss#0", "kiss and tell", "janet waldo")
        assert await filled.upsert([rewritten], NS) == 1
        assert await filled.about(["kiss and tell"], namespace=NS) == [rewritten]
        found = await filled.linked(["shirley temple"], namespace=NS, per_entity=5)
        assert ids(found) == {"shirley temple": ["temple#0", "archer#0"]}

    async def test_relations_are_read_back_with_their_record(self, filled) -> None:
        portrayed = Relation(
            source="corliss archer",
            target="shirley temple",
            type="PORTRAYED_BY",
            description="Shirley Temple stars as Corliss Archer.",
        )
        related = KISS.model_copy(update={"relations": (portrayed,)})
        await filled.upsert([related], NS)
        assert await filled.about(["kiss and tell"], namespace=NS) == [related]
        found = await filled.linked(["corliss archer"], namespace=NS, per_entity=5)
        assert found["corliss archer"][-1].relations == (portrayed,)

    async def test_delete_by_ids_or_all(self, filled) -> None:
        await filled.delete(namespace=NS, ids=["kiss#0", "missing"])
        assert await filled.count(NS) == 3
        found = await filled.linked(["kiss and tell"], namespace=NS, per_entity=5)
        assert ids(found) == {"kiss and tell": ["archer#0"]}
        with pytest.raises(InvalidRequestError):
            await filled.delete(namespace=NS)
        await filled.delete(namespace=NS, delete_all=True)
        assert (await filled.count(NS), await listed(filled)) == (0, [])

    async def test_ids_are_listed_in_pages_by_prefix(self, store) -> None:
        many = [record(f"doc#{n:04d}", f"entity {n}") for n in range(2 * LIST_PAGE_SIZE + 5)]
        await store.upsert([*many, record("dog#0", "rex")], NS)
        pages = await listed(store, prefix="doc#")
        assert [len(page) for page in pages] == [LIST_PAGE_SIZE, LIST_PAGE_SIZE, 5]
        assert [i for page in pages for i in page] == [r.id for r in many]
        assert await listed(store, prefix="dog") == [["dog#0"]]
        assert await listed(store, "empty") == []

    async def test_records_of_another_version_are_listed_by_prefix(self, store) -> None:
        current = [
            record(f"doc#{n:04d}", f"e{n}").model_copy(update={"version": "v2"}) for n in range(3)
        ]
        older = [
            record("doc#0100", "old").model_copy(update={"version": "v1"}),
            record("dog#0", "unversioned"),
            *(
                record(f"doc#{n:04d}", "x").model_copy(update={"version": "v1"})
                for n in range(200, 200 + LIST_PAGE_SIZE)
            ),
        ]
        await store.upsert([*current, *older], NS)
        outdated = [page async for page in store.outdated_ids(NS, "v2")]
        assert [len(page) for page in outdated] == [LIST_PAGE_SIZE, 2]
        assert [i for page in outdated for i in page] == sorted(r.id for r in older)
        assert [p async for p in store.outdated_ids(NS, "v2", prefix="dog")] == [["dog#0"]]
        assert [p async for p in store.outdated_ids(NS, "v1", prefix="doc#000")] == [
            [r.id for r in current]
        ]
        assert (await store.about(["old"], namespace=NS))[0].version == "v1"
        assert [p async for p in store.outdated_ids("empty", "v2")] == []

    async def test_a_lookup_of_what_many_records_are_about_reads_a_bounded_number(
        self, store
    ) -> None:
        book = [record(f"book#{n:05d}", "london", "thames") for n in range(ABOUT_READ + 5)]
        await store.upsert([*book, TEMPLE], NS)
        found = await store.about(["london", "shirley temple"], namespace=NS)
        assert len(found) == ABOUT_READ
        assert {r.id for r in found} <= {r.id for r in [*book, TEMPLE]}
        assert [r.id for r in found] == sorted(r.id for r in found)

    async def test_counts(self, filled) -> None:
        assert await filled.count(NS) == 4
        assert await filled.entity_count(NS) == 5
        assert (await filled.count("empty"), await filled.entity_count("empty")) == (0, 0)
