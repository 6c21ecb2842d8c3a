"""What every NamespaceGenerations must do. Subclass and provide a ``generations`` fixture
(empty)."""

from __future__ import annotations

import asyncio

from retrieval.ports.namespace_generations import Generation, NamespaceGenerations

CONCURRENT = 20


class NamespaceGenerationsContract:
    async def test_a_namespace_never_advanced_is_at_zero(
        self, generations: NamespaceGenerations
    ) -> None:
        assert await generations.current("never-written") == Generation(0, {})

    async def test_advance_adds_one_and_returns_the_new_value(
        self, generations: NamespaceGenerations
    ) -> None:
        assert [await generations.advance("tea") for _ in range(3)] == [1, 2, 3]
        assert (await generations.current("tea")).number == 3

    async def test_namespaces_are_independent(self, generations: NamespaceGenerations) -> None:
        await generations.advance("tea")
        await generations.advance("tea")
        await generations.advance("tea.archive")
        assert (await generations.current("tea")).number == 2
        assert (await generations.current("tea.archive")).number == 1
        assert (await generations.current("te")).number == 0

    async def test_concurrent_advances_each_count_once(
        self, generations: NamespaceGenerations
    ) -> None:
        returned = await asyncio.gather(*(generations.advance("tea") for _ in range(CONCURRENT)))
        assert sorted(returned) == list(range(1, CONCURRENT + 1))
        assert (await generations.current("tea")).number == CONCURRENT

    async def test_concurrent_advances_of_an_advanced_namespace(
        self, generations: NamespaceGenerations
    ) -> None:
        await generations.advance("tea")
        returned = await asyncio.gather(
            *(generations.advance("tea") for _ in range(CONCURRENT)),
            generations.advance("other"),
        )
        assert sorted(returned[:CONCURRENT]) == list(range(2, CONCURRENT + 2))
        assert returned[CONCURRENT] == 1
        assert (await generations.current("tea")).number == CONCURRENT + 1

    async def test_an_advance_keeps_the_highest_lsn_reported_of_each_index(
        self, generations: NamespaceGenerations
    ) -> None:
        await generations.advance("tea")
        assert await generations.current("tea") == Generation(1, {})
        await generations.advance("tea", {"dense": 7})
        await generations.advance("tea", {"dense": 5, "sparse": 3})
        assert await generations.current("tea") == Generation(3, {"dense": 7, "sparse": 3})
        await generations.advance("tea", {"sparse": 9})
        await generations.advance("tea")
        assert await generations.current("tea") == Generation(5, {"dense": 7, "sparse": 9})
        assert await generations.current("other") == Generation(0, {})

    async def test_concurrent_advances_keep_the_highest_lsn_of_each_index(
        self, generations: NamespaceGenerations
    ) -> None:
        await asyncio.gather(
            *(
                generations.advance("tea", {"dense": lsn, "sparse": CONCURRENT - lsn})
                for lsn in range(CONCURRENT)
            )
        )
        assert await generations.current("tea") == Generation(
            CONCURRENT, {"dense": CONCURRENT - 1, "sparse": CONCURRENT}
        )
