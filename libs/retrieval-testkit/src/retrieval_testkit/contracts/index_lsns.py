"""What every IndexLsns must do, seen through the indexes whose LSNs it follows. Subclass and
provide an ``indexed`` fixture: an ``Indexed`` whose indexes are empty and caught up with
every write they acknowledge."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from retrieval.domain.keywords import KeywordRecord
from retrieval.domain.vectors import VectorRecord
from retrieval.ports.index_lsns import IndexLsns
from retrieval.ports.keyword_index import KeywordIndex
from retrieval.ports.vector_index import VectorIndex

DIMENSION = 4


@dataclass(frozen=True)
class Indexed:
    """``lsns`` and the indexes it follows, named as it names them (``names``; none for
    indexes that give no LSN)."""

    lsns: IndexLsns
    vectors: VectorIndex
    keywords: KeywordIndex
    names: frozenset[str]


async def write(indexed: Indexed, namespace: str, *ids: str) -> None:
    await indexed.vectors.upsert(
        [VectorRecord(id=i, values=(1.0, 0.5, 0.25, float(n))) for n, i in enumerate(ids)],
        namespace,
    )
    await indexed.keywords.upsert(
        [KeywordRecord(id=i, text=f"withered tea leaf {i}") for i in ids], namespace
    )


async def ask(indexed: Indexed, namespace: str) -> None:
    await indexed.vectors.query((1.0, 0.5, 0.25, 0.0), top_k=3, namespace=namespace)
    await indexed.keywords.query("withered tea", top_k=3, namespace=namespace)


class IndexLsnsContract:
    async def test_no_write_is_known_in_a_namespace_never_written(self, indexed: Indexed) -> None:
        await write(indexed, "tea", "a")
        assert indexed.lsns.written("never-written") == {}

    async def test_the_writes_of_each_index_are_known_under_its_name(
        self, indexed: Indexed
    ) -> None:
        await write(indexed, "tea", "a", "b")
        upserted = indexed.lsns.written("tea")
        assert upserted.keys() == indexed.names
        await indexed.vectors.delete(namespace="tea", ids=["a"])
        await indexed.keywords.delete(namespace="tea", ids=["a"])
        deleted = indexed.lsns.written("tea")
        assert deleted.keys() == indexed.names
        assert all(deleted[name] > upserted[name] for name in indexed.names)

    async def test_answers_caught_up_reach_what_each_index_wrote(self, indexed: Indexed) -> None:
        await write(indexed, "tea", "a", "b")
        with indexed.lsns.answering() as answers:
            await ask(indexed, "tea")
        answered = answers.lowest("tea")
        written = indexed.lsns.written("tea")
        assert answered.keys() == indexed.names
        assert all(answered[name] >= written[name] for name in indexed.names)

    async def test_answers_are_collected_per_block_and_namespace_with_the_tasks_it_starts(
        self, indexed: Indexed
    ) -> None:
        await write(indexed, "tea", "a")
        await write(indexed, "coffee", "b")
        await ask(indexed, "tea")
        with indexed.lsns.answering() as answers:
            await asyncio.gather(ask(indexed, "coffee"), asyncio.sleep(0))
        assert answers.lowest("tea") == {}
        assert answers.lowest("coffee").keys() == indexed.names
