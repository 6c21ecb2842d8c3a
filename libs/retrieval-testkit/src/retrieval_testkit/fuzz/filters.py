"""Metadata filters: parsed by ``domain/filters.py`` and evaluated by the in-memory vector
index (the reference evaluator, ``filters.evaluate``) and by the embedded indexes (their
vectorised ``MetadataColumns``). A filter the parser refuses raises ``InvalidFilterError``
there and in every index; a filter it accepts finds, in every index, exactly the records
the reference evaluator says it matches."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import strategies as st

from retrieval.adapters.embedded_index.bm25_keyword_index import Bm25KeywordIndex
from retrieval.adapters.embedded_index.vector_index import EmbeddedVectorIndex
from retrieval.domain.filters import (
    EQUALITY_OPERATORS,
    LOGICAL_OPERATORS,
    RANGE_OPERATORS,
    SET_OPERATORS,
    evaluate,
    is_number,
    parse_filter,
)
from retrieval.domain.keywords import KeywordRecord
from retrieval.domain.vectors import VectorRecord
from retrieval.errors import InvalidFilterError
from retrieval_testkit.fuzz.harness import Check, RefusedError, Runner, Target
from retrieval_testkit.fuzz.strategies import field_names, json_values, mostly, scalars
from retrieval_testkit.in_memory_vector_index import InMemoryVectorIndex

NAMESPACE = "filters"
ODDS = 30
"""A filter has many parts: each is hostile this rarely, so that half the filters parse."""
METADATA: tuple[dict[str, Any], ...] = (
    {"region": "assam", "year": 2019, "tags": ["fungal", "leaf"], "organic": True},
    {"region": "nilgiris", "year": 2021, "tags": [], "organic": False, "score": 0.5},
    {"region": "darjeeling", "year": 2023.5, "tags": ["frost"], "score": -1},
    {"region": "Assam", "year": -0.0, "tags": ["fungal"], "score": 1e300},
    {"region": "", "year": 0, "organic": True, "score": 2**53},
    {"region": "assam", "tags": ["assam", "frost", "leaf"]},
    {"year": 2020, "score": 0.1 + 0.2},
    {"region": "kenya", "year": 1, "organic": 1, "score": True},
    {"region": "1", "year": "2019", "tags": ["1", "true"]},
    {},
)
"""Records of every value kind metadata holds, the same fields with different kinds."""


def listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


VALUES = tuple(
    {
        (type(value), repr(value)): value
        for record in METADATA
        for field in record.values()
        for value in listed(field)
    }.values()
)
"""Every value the records hold, for operands that match something."""


def values() -> st.SearchStrategy[Any]:
    """Operands that match something: the records' own values, mostly."""
    return mostly(st.sampled_from(VALUES), scalars(), odds=4)


def hostile() -> st.SearchStrategy[Any]:
    return st.one_of(scalars(), st.lists(scalars(), max_size=4), json_values(4))


def operations() -> st.SearchStrategy[tuple[str, Any]]:
    """An operator and its operand: of the kind it takes mostly, of any other now and then."""
    numbers = st.one_of(st.sampled_from([v for v in VALUES if is_number(v)]), st.floats())
    known = st.one_of(
        st.tuples(st.sampled_from(sorted(EQUALITY_OPERATORS)), mostly(values(), hostile(), ODDS)),
        st.tuples(
            st.sampled_from(sorted(SET_OPERATORS)),
            mostly(st.lists(values(), max_size=5), hostile(), ODDS),
        ),
        st.tuples(st.sampled_from(sorted(RANGE_OPERATORS)), mostly(numbers, hostile(), ODDS)),
        st.tuples(st.just("$exists"), mostly(st.booleans(), hostile(), ODDS)),
    )
    unknown = st.tuples(st.sampled_from(["$regex", "$not", "eq", "$", "$and", "$size"]), hostile())
    return mostly(known, unknown, ODDS)


def conditions() -> st.SearchStrategy[dict[str, Any]]:
    fields = mostly(
        st.sampled_from(["region", "year", "tags", "organic", "score"]), field_names(), ODDS
    )
    return st.one_of(
        st.builds(lambda field, value: {field: value}, fields, mostly(values(), hostile(), ODDS)),
        st.builds(
            lambda field, operations: {field: dict(operations)},
            fields,
            st.lists(operations(), min_size=1, max_size=3),
        ),
    )


def filters() -> st.SearchStrategy[Any]:
    """Trees of conditions under ``$and``/``$or`` and several keys, and any JSON at all."""
    tree = st.recursive(
        conditions(),
        lambda children: st.one_of(
            st.builds(
                lambda operator, clauses: {operator: clauses},
                mostly(st.sampled_from(sorted(LOGICAL_OPERATORS)), st.sampled_from(["$not"]), ODDS),
                mostly(st.lists(children, min_size=1, max_size=4), hostile(), ODDS),
            ),
            st.lists(children, min_size=2, max_size=3).map(merged),
        ),
        max_leaves=8,
    )
    return mostly(tree, st.one_of(st.none(), json_values()))


def merged(clauses: list[dict[str, Any]]) -> dict[str, Any]:
    return {key: value for clause in clauses for key, value in clause.items()}


def vector(position: int) -> tuple[float, ...]:
    return (1.0, position / 10, 0.5, (position % 3) / 3)


async def seeded() -> tuple[list[Any], list[Any]]:
    """The vector and keyword indexes, each holding every record."""
    vectors = [
        VectorRecord(id=f"r{n}", values=vector(n), metadata=meta) for n, meta in enumerate(METADATA)
    ]
    texts = [
        KeywordRecord(id=f"r{n}", text=f"tea record {n}", metadata=meta)
        for n, meta in enumerate(METADATA)
    ]
    indexes: list[Any] = [InMemoryVectorIndex(), EmbeddedVectorIndex()]
    keywords: list[Any] = [Bm25KeywordIndex()]
    for index in indexes:
        await index.upsert(vectors, NAMESPACE)
    for index in keywords:
        await index.upsert(texts, NAMESPACE)
    return indexes, keywords


async def found(indexes: list[Any], keywords: list[Any], raw: Any) -> dict[str, set[str] | str]:
    """Per index, the ids the filter finds, or the name of what it raised."""
    size = len(METADATA)
    answers: dict[str, set[str] | str] = {}
    for index in indexes:
        name = type(index).__name__
        try:
            matches = await index.query(vector(0), top_k=size, namespace=NAMESPACE, filter=raw)
            answers[name] = {match.id for match in matches}
        except InvalidFilterError:
            answers[name] = "InvalidFilterError"
    for index in keywords:
        name = type(index).__name__
        try:
            matches = await index.query("tea", top_k=size, namespace=NAMESPACE, filter=raw)
            answers[name] = {match.id for match in matches}
        except InvalidFilterError:
            answers[name] = "InvalidFilterError"
    return answers


@contextmanager
def session(runner: Runner) -> Iterator[Check]:
    indexes, keywords = runner.run(seeded())

    def check(raw: Any) -> None:
        try:
            expression = runner.call(parse_filter, raw)
        except InvalidFilterError:
            expected: set[str] | str = "InvalidFilterError"
        else:
            expected = {f"r{n}" for n, meta in enumerate(METADATA) if evaluate(expression, meta)}
        answers = runner.run(found(indexes, keywords, raw))
        wrong = {name: answer for name, answer in answers.items() if answer != expected}
        assert not wrong, f"expected {expected}, got {wrong}"
        if expected == "InvalidFilterError":
            raise RefusedError(expected)

    try:
        yield check
    finally:
        runner.run(indexes[1].close())
        runner.run(keywords[0].close())


TARGET = Target(name="filters", strategy=filters(), allowed=(), session=session)
