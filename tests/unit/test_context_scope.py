"""A retrieval abandoned mid-way is closed by the garbage collector in whatever context runs
then. Its context variables must not be changed there: on CPython 3.11 a change made from a
collection that interrupted another change crashes the interpreter (python/cpython#148891)."""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Coroutine, Generator
from contextlib import AbstractContextManager
from contextvars import ContextVar
from typing import Any

import pytest

from retrieval.adapters.pinecone.freshness import ANSWERS, PineconeIndexLsns, PineconeLsns
from retrieval.context_scope import bound
from retrieval.observability import round_trips
from retrieval.service.caching.freshness import READING, NamespaceFreshness, NoIndexLsns
from retrieval_testkit import InMemoryNamespaceGenerations


class Pending:
    """An awaitable that never completes: the call is abandoned while it waits."""

    def __await__(self) -> Generator[None, None, None]:
        yield


async def waiting_in(scope: AbstractContextManager[object]) -> None:
    with scope:
        await Pending()


async def computing_on_a_settling_index() -> None:
    freshness = NamespaceFreshness(InMemoryNamespaceGenerations(), NoIndexLsns(), 5.0)

    async def compute() -> None:
        await Pending()

    await freshness.computed("tea", compute)


SCOPES: dict[str, tuple[ContextVar[Any], Callable[[], Coroutine[Any, Any, None]]]] = {
    "freshness": (READING, computing_on_a_settling_index),
    "pinecone answers": (
        ANSWERS,
        lambda: waiting_in(PineconeIndexLsns(PineconeLsns()).answering()),
    ),
    "round trips": (
        round_trips._COUNTING,
        lambda: waiting_in(round_trips.counting({}, "search")),
    ),
}


@pytest.mark.parametrize("scope", SCOPES)
def test_closing_an_abandoned_call_from_another_context_leaves_that_context_alone(
    scope: str,
) -> None:
    var, call = SCOPES[scope]
    abandoned = call()
    contextvars.copy_context().run(abandoned.send, None)
    elsewhere = contextvars.copy_context()
    held = object()
    elsewhere.run(var.set, held)

    elsewhere.run(abandoned.close)

    assert elsewhere[var] is held


def test_a_bound_value_is_undone_at_the_end_of_the_block() -> None:
    var: ContextVar[str | None] = ContextVar("example", default=None)
    with bound(var, "outer"):
        with bound(var, "inner") as value:
            assert (value, var.get()) == ("inner", "inner")
        assert var.get() == "outer"
    assert var.get() is None
