"""The vectorised filter evaluator agrees with the reference evaluator on any filter."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.domain.filters import (
    MAX_DEPTH,
    MAX_SET_VALUES,
    AllOf,
    Condition,
    evaluate,
    matches,
    parse_filter,
)
from retrieval.domain.metadata_columns import MetadataColumns
from retrieval.errors import InvalidFilterError

FIELDS = ["domain", "year", "organic", "tags"]
strings = st.sampled_from(["a", "b", "c", "plant_diseases"])
numbers = st.one_of(
    st.integers(-5, 5), st.floats(-5, 5, allow_nan=False).map(lambda f: round(f, 1))
)
scalars = st.one_of(strings, numbers, st.booleans())
values = st.one_of(scalars, st.lists(strings, max_size=3))
records = st.lists(st.dictionaries(st.sampled_from(FIELDS), values, max_size=4), max_size=25)


def conditions() -> st.SearchStrategy[dict]:
    field = st.sampled_from(FIELDS)
    operator = st.one_of(
        st.tuples(st.sampled_from(["$eq", "$ne"]), scalars),
        st.tuples(st.sampled_from(["$in", "$nin"]), st.lists(scalars, max_size=3)),
        st.tuples(st.sampled_from(["$gt", "$gte", "$lt", "$lte"]), numbers),
        st.tuples(st.just("$exists"), st.booleans()),
    )
    implicit = st.builds(lambda f, v: {f: v}, field, scalars)
    explicit = st.builds(lambda f, op: {f: {op[0]: op[1]}}, field, operator)
    return st.one_of(implicit, explicit)


filters = st.recursive(
    conditions(),
    lambda inner: st.one_of(
        st.builds(lambda items: {"$and": items}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda items: {"$or": items}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda a, b: {**a, **b}, inner, inner),
    ),
    max_leaves=6,
)


@settings(max_examples=400, deadline=None)
@given(records, filters)
def test_columnar_masks_equal_the_reference(rows: list[dict], raw: dict) -> None:
    expression = parse_filter(raw)
    assert expression is not None
    expected = [evaluate(expression, row) for row in rows]
    assert MetadataColumns(rows).mask(expression).tolist() == expected


@pytest.mark.parametrize(
    ("raw", "metadata", "expected"),
    [
        ({"year": 2020}, {"year": 2020.0}, True),
        ({"organic": True}, {"organic": 1}, False),
        ({"year": 1}, {"year": True}, False),
        ({"domain": "1"}, {"domain": 1}, False),
        ({"tags": "x"}, {"tags": ["x", "y"]}, True),
        ({"tags": {"$ne": "x"}}, {"tags": ["x", "y"]}, False),
        ({"tags": {"$nin": ["z"]}}, {"tags": ["x", "y"]}, True),
        ({"year": {"$ne": 1}}, {}, True),
        ({"year": {"$nin": [1]}}, {}, True),
        ({"year": {"$gt": 1}}, {}, False),
        ({"year": {"$gt": 1}}, {"year": "2"}, False),
        ({"domain": {"$in": []}}, {"domain": "a"}, False),
        ({"$or": [{"a": 1}, {"b": 2}], "c": 3}, {"b": 2, "c": 3}, True),
        ({"year": {"$gte": 2, "$lt": 3}}, {"year": 3}, False),
    ],
)
def test_reference_semantics(raw: dict, metadata: dict, expected: bool) -> None:
    assert matches(raw, metadata) is expected


def test_several_keys_mean_all_of_them() -> None:
    assert parse_filter({"a": 1, "b": {"$gt": 2, "$lt": 5}}) == AllOf(
        (Condition("a", "$eq", 1), AllOf((Condition("b", "$gt", 2), Condition("b", "$lt", 5))))
    )


def test_no_filter_and_empty_filter_match_everything() -> None:
    assert parse_filter(None) is None
    assert parse_filter({}) is None


@pytest.mark.parametrize(
    ("raw", "path"),
    [
        ({"a": {"$regex": "x"}}, "filter.a.$regex"),
        ({"$nor": [{"a": 1}]}, "filter.$nor"),
        ({"a": {"$in": "x"}}, "filter.a.$in"),
        ({"a": {"$in": [{"b": 1}]}}, "filter.a.$in"),
        ({"a": {"$gt": True}}, "filter.a.$gt"),
        ({"a": None}, "filter.a"),
        ({"a": [1, 2]}, "filter.a"),
        ({"$and": {"a": 1}}, "filter.$and"),
        ({"$and": [1]}, "filter.$and[0]"),
        ({"$or": [{}]}, "filter.$or[0]"),
        ({"a": {}}, "filter.a"),
        ({"a": {"$exists": 1}}, "filter.a.$exists"),
    ],
)
def test_malformed_filters_name_the_offending_part(raw: dict, path: str) -> None:
    with pytest.raises(InvalidFilterError) as raised:
        parse_filter(raw)
    assert raised.value.field == path


def nested(depth: int, operator: str = "$and") -> dict:
    """``{"a": 1}`` inside ``depth`` levels of ``operator``."""
    raw: dict = {"a": 1}
    for _ in range(depth):
        raw = {operator: [raw]}
    return raw


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["$in", "$nin"]), st.integers(0, 40), st.booleans())
def test_a_set_takes_at_most_the_documented_number_of_values(
    operator: str, distance: int, over: bool
) -> None:
    size = MAX_SET_VALUES + distance + 1 if over else MAX_SET_VALUES - distance
    raw = {"domain": {operator: [f"d{n}" for n in range(size)]}}
    if not over:
        expression = parse_filter(raw)
        assert isinstance(expression, Condition)
        assert len(expression.operand) == size
        assert evaluate(expression, {"domain": "d0"}) is (operator == "$in" and size > 0)
        return
    with pytest.raises(InvalidFilterError, match=f"at most {MAX_SET_VALUES}") as raised:
        parse_filter(raw)
    assert raised.value.field == f"filter.domain.{operator}"


@settings(max_examples=60, deadline=None)
@given(st.integers(0, MAX_DEPTH + 20), st.sampled_from(["$and", "$or"]))
def test_logical_operators_nest_at_most_the_documented_depth(depth: int, operator: str) -> None:
    raw = nested(depth, operator)
    if depth <= MAX_DEPTH:
        assert matches(raw, {"a": 1})
        assert not matches(raw, {"a": 2})
        return
    with pytest.raises(InvalidFilterError, match=f"at most {MAX_DEPTH} deep") as raised:
        parse_filter(raw)
    assert raised.value.field == "filter" + f".{operator}[0]" * MAX_DEPTH + f".{operator}"


def test_a_filter_nested_past_the_recursion_limit_is_refused_not_a_crash() -> None:
    raw = nested(5_000, "$or")
    with pytest.raises(InvalidFilterError):
        parse_filter(raw)


def test_a_filter_must_be_an_object() -> None:
    with pytest.raises(InvalidFilterError):
        parse_filter(["domain"])  # type: ignore[arg-type]


def test_masks_are_fresh_arrays() -> None:
    columns = MetadataColumns([{"a": 1}, {}])
    expression = parse_filter({"a": {"$exists": True}})
    assert expression is not None
    first = columns.mask(expression)
    first[:] = False
    assert np.array_equal(columns.mask(expression), [True, False])
