"""What every NamespaceGenerations must do. Subclass and provide a ``generations`` fixture
(empty)."""

from __future__ import annotations

import asyncio

from retrieval.ports.namespace_generations import NamespaceGenerations

CONCURRENT = 20


class NamespaceGenerationsContract:
    async def test_a_namespace_never_advanced_is_at_zero(
        self, generations: NamespaceGenerations
    ) -> None:
        assert await generations.current("never-written") == 0

    async def test_advance_adds_one_and_returns_the_new_value(
        self, generations: NamespaceGenerations
    ) -> None:
        assert [await generations.advance("tea") for _ in range(3)] == [1, 2, 3]
        assert await generations.current("tea") == 3

    async def test_namespaces_are_independent(self, generations: NamespaceGenerations) -> None:
        await generations.advance("tea")
        await generations.advance("tea")
        await generations.advance("tea.archive")
        assert await generations.current("tea") == 2
        assert await generations.current("tea.archive") == 1
        assert await generations.current("te") == 0

    async def test_concurrent_advances_each_count_once(
        self, generations: NamespaceGenerations
    ) -> None:
        returned = await asyncio.gather(*(generations.advance("tea") for _ in range(CONCURRENT)))
        assert sorted(returned) == list(range(1, CONCURRENT + 1))
        assert await generations.current("tea") == CONCURRENT

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
        assert await generations.current("tea") == CONCURRENT + 1
