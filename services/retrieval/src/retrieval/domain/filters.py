"""Pinecone's metadata filter language: parsing, validation, and a reference evaluator.

A filter is a JSON object. Top-level keys are field names or ``$and`` / ``$or``;
several keys mean all must hold. A field maps to a value (``$eq``) or to an object
of operators, all of which must hold::

    {"domain": {"$in": ["plant_diseases", "weather_patterns"]}, "year": {"$gte": 2020}}

Semantics (as Pinecone's):
- ``$eq`` / ``$ne`` take a string, number or boolean; ``$in`` / ``$nin`` a list of them.
- ``$gt`` ``$gte`` ``$lt`` ``$lte`` take a number and match numbers only.
- ``$exists`` takes a boolean.
- Types are strict: a boolean never equals a number, a string never equals a number.
- A list-of-strings field matches ``$eq`` / ``$in`` when any element matches, and
  ``$ne`` / ``$nin`` when no element does.
- A record without the field matches ``$ne``, ``$nin`` and ``$exists: false`` only.

Size: a ``$in`` / ``$nin`` takes at most ``MAX_SET_VALUES`` values, and ``$and`` / ``$or``
nest at most ``MAX_DEPTH`` deep; a larger filter is refused like a malformed one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from retrieval.errors import InvalidFilterError

Scalar = str | int | float | bool

EQUALITY_OPERATORS = frozenset({"$eq", "$ne"})
SET_OPERATORS = frozenset({"$in", "$nin"})
RANGE_OPERATORS = frozenset({"$gt", "$gte", "$lt", "$lte"})
FIELD_OPERATORS = EQUALITY_OPERATORS | SET_OPERATORS | RANGE_OPERATORS | {"$exists"}
LOGICAL_OPERATORS = frozenset({"$and", "$or"})
MAX_SET_VALUES = 10_000
"""The most values one ``$in`` or ``$nin`` takes: Pinecone's documented limit."""
MAX_DEPTH = 10
"""The deepest ``$and`` / ``$or`` may nest. Pinecone documents no bound; ten levels are more
than a filter written by hand or by a model needs, and keep parsing and evaluating (both
recursive) far from Python's recursion limit."""


@dataclass(frozen=True, slots=True)
class Condition:
    field: str
    operator: str
    operand: Any


@dataclass(frozen=True, slots=True)
class AllOf:
    clauses: tuple[Expression, ...]


@dataclass(frozen=True, slots=True)
class AnyOf:
    clauses: tuple[Expression, ...]


Expression = Condition | AllOf | AnyOf


def is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_scalar(value: object) -> bool:
    return isinstance(value, str | bool) or is_number(value)


def parse_filter(raw: Mapping[str, Any] | None) -> Expression | None:
    """Validate a filter and return its expression tree (None for no filter)."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise InvalidFilterError(f"a filter must be an object, got {type(raw).__name__}")
    if not raw:
        return None
    return _parse_object(raw, "filter", 0)


def _parse_object(raw: Mapping[str, Any], path: str, depth: int) -> Expression:
    """``depth``: how many ``$and`` / ``$or`` enclose ``raw``."""
    if not raw:
        raise InvalidFilterError("an empty object is not a filter", path=path)
    clauses = tuple(_parse_key(key, value, f"{path}.{key}", depth) for key, value in raw.items())
    return clauses[0] if len(clauses) == 1 else AllOf(clauses)


def _parse_key(key: str, value: Any, path: str, depth: int) -> Expression:
    if not isinstance(key, str) or not key:
        raise InvalidFilterError("field names must be non-empty strings", path=path)
    if key in LOGICAL_OPERATORS:
        if depth == MAX_DEPTH:
            raise InvalidFilterError(f"$and and $or nest at most {MAX_DEPTH} deep", path=path)
        if not isinstance(value, list) or not value:
            raise InvalidFilterError(f"{key} takes a non-empty list of filters", path=path)
        clauses = []
        for position, clause in enumerate(value):
            if not isinstance(clause, Mapping):
                raise InvalidFilterError(f"{key} items must be objects", path=f"{path}[{position}]")
            clauses.append(_parse_object(clause, f"{path}[{position}]", depth + 1))
        return AllOf(tuple(clauses)) if key == "$and" else AnyOf(tuple(clauses))
    if key.startswith("$"):
        raise InvalidFilterError(f"unknown operator {key}", path=path)
    if isinstance(value, Mapping):
        if not value:
            raise InvalidFilterError("an empty operator object is not a condition", path=path)
        conditions = tuple(
            _parse_condition(key, op, arg, f"{path}.{op}") for op, arg in value.items()
        )
        return conditions[0] if len(conditions) == 1 else AllOf(conditions)
    return _parse_condition(key, "$eq", value, path)


def _parse_condition(field: str, operator: str, operand: Any, path: str) -> Condition:
    if operator not in FIELD_OPERATORS:
        raise InvalidFilterError(f"unknown operator {operator}", path=path)
    if operator in EQUALITY_OPERATORS and not is_scalar(operand):
        raise InvalidFilterError(f"{operator} takes a string, number or boolean", path=path)
    if operator in SET_OPERATORS:
        if not isinstance(operand, list) or not all(is_scalar(item) for item in operand):
            raise InvalidFilterError(
                f"{operator} takes a list of strings, numbers or booleans", path=path
            )
        if len(operand) > MAX_SET_VALUES:
            raise InvalidFilterError(
                f"{operator} takes at most {MAX_SET_VALUES} values, got {len(operand)}", path=path
            )
        operand = tuple(operand)
    if operator in RANGE_OPERATORS and not is_number(operand):
        raise InvalidFilterError(f"{operator} takes a number", path=path)
    if operator == "$exists" and not isinstance(operand, bool):
        raise InvalidFilterError("$exists takes true or false", path=path)
    return Condition(field, operator, operand)


def scalar_equals(stored: object, wanted: object) -> bool:
    """Strictly typed equality: booleans, numbers and strings never equal each other."""
    if isinstance(stored, bool) or isinstance(wanted, bool):
        return isinstance(stored, bool) and isinstance(wanted, bool) and stored == wanted
    if is_number(stored) and is_number(wanted):
        return stored == wanted
    return isinstance(stored, str) and isinstance(wanted, str) and stored == wanted


def evaluate(expression: Expression | None, metadata: Mapping[str, Any]) -> bool:
    """Whether one record's metadata satisfies a parsed filter (the reference semantics)."""
    if expression is None:
        return True
    if isinstance(expression, AllOf):
        return all(evaluate(clause, metadata) for clause in expression.clauses)
    if isinstance(expression, AnyOf):
        return any(evaluate(clause, metadata) for clause in expression.clauses)
    return _evaluate_condition(expression, metadata)


def _evaluate_condition(condition: Condition, metadata: Mapping[str, Any]) -> bool:
    present = condition.field in metadata
    operator, operand = condition.operator, condition.operand
    if operator == "$exists":
        return present == operand
    if not present:
        return operator in {"$ne", "$nin"}
    stored = metadata[condition.field]
    values = stored if isinstance(stored, list) else [stored]
    if operator == "$eq":
        return any(scalar_equals(value, operand) for value in values)
    if operator == "$ne":
        return not any(scalar_equals(value, operand) for value in values)
    if operator == "$in":
        return any(scalar_equals(value, item) for value in values for item in operand)
    if operator == "$nin":
        return not any(scalar_equals(value, item) for value in values for item in operand)
    if not is_number(stored):
        return False
    return {
        "$gt": stored > operand,
        "$gte": stored >= operand,
        "$lt": stored < operand,
        "$lte": stored <= operand,
    }[operator]


def matches(raw: Mapping[str, Any] | None, metadata: Mapping[str, Any]) -> bool:
    """Parse and evaluate a filter against one record's metadata."""
    return evaluate(parse_filter(raw), metadata)


def parse_delete_selector(
    ids: object | None, raw: Mapping[str, Any] | None, delete_all: bool
) -> Expression | None:
    """Check that a delete names exactly one of ids, a filter or everything; parse the filter."""
    if sum((ids is not None, raw is not None, delete_all)) != 1:
        raise InvalidFilterError("give exactly one of ids, filter, delete_all", path="delete")
    expression = parse_filter(raw)
    if raw is not None and expression is None:
        raise InvalidFilterError("an empty filter would delete everything; use delete_all")
    return expression
