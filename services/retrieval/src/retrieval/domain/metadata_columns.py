"""Vectorised evaluation of metadata filters over many records at once.

Gives the same answers as ``filters.evaluate`` record by record (a property test holds
them together) but compares numpy columns, so a filter over 10,000 records costs
microseconds. Columns are built per field on first use.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from retrieval.domain.filters import AllOf, AnyOf, Condition, Expression, is_number

Mask = npt.NDArray[np.bool_]
MISSING_CODE = -1
UNKNOWN_CODE = -2
_ABSENT = object()


class FieldColumn:
    """One metadata field across all records, split by value type."""

    def __init__(self, values: Sequence[Any]) -> None:
        size = len(values)
        self.present = np.zeros(size, dtype=bool)
        self.codes = np.full(size, MISSING_CODE, dtype=np.int32)
        self.numbers = np.full(size, np.nan, dtype=np.float64)
        self.bools = np.full(size, -1, dtype=np.int8)
        self.vocabulary: dict[str, int] = {}
        self.lists: dict[int, frozenset[str]] = {}
        for row, value in enumerate(values):
            if value is _ABSENT:
                continue
            self.present[row] = True
            if isinstance(value, bool):
                self.bools[row] = int(value)
            elif isinstance(value, str):
                self.codes[row] = self.vocabulary.setdefault(value, len(self.vocabulary))
            elif is_number(value):
                self.numbers[row] = value
            elif isinstance(value, list):
                self.lists[row] = frozenset(value)

    def equals_any(self, wanted: Sequence[Any]) -> Mask:
        mask = np.zeros(self.present.shape, dtype=bool)
        strings = {item for item in wanted if isinstance(item, str)}
        codes = [self.vocabulary.get(item, UNKNOWN_CODE) for item in strings]
        if codes:
            mask |= np.isin(self.codes, codes)
        for item in wanted:
            if isinstance(item, bool):
                mask |= self.bools == int(item)
            elif is_number(item):
                mask |= self.numbers == item
        for row, items in self.lists.items():
            if not items.isdisjoint(strings):
                mask[row] = True
        return mask

    def compare(self, operator: str, operand: float) -> Mask:
        with np.errstate(invalid="ignore"):
            if operator == "$gt":
                return self.numbers > operand
            if operator == "$gte":
                return self.numbers >= operand
            if operator == "$lt":
                return self.numbers < operand
            return self.numbers <= operand


class MetadataColumns:
    """Filter masks over an immutable list of metadata records."""

    def __init__(self, records: Sequence[Mapping[str, Any]]) -> None:
        self._records = records
        self._columns: dict[str, FieldColumn] = {}
        self.size = len(records)

    def column(self, field: str) -> FieldColumn:
        if field not in self._columns:
            self._columns[field] = FieldColumn([r.get(field, _ABSENT) for r in self._records])
        return self._columns[field]

    def mask(self, expression: Expression) -> Mask:
        if isinstance(expression, AllOf):
            mask = np.ones(self.size, dtype=bool)
            for clause in expression.clauses:
                mask &= self.mask(clause)
            return mask
        if isinstance(expression, AnyOf):
            mask = np.zeros(self.size, dtype=bool)
            for clause in expression.clauses:
                mask |= self.mask(clause)
            return mask
        return self._condition(expression)

    def _condition(self, condition: Condition) -> Mask:
        column = self.column(condition.field)
        operator, operand = condition.operator, condition.operand
        if operator == "$exists":
            return column.present.copy() if operand else ~column.present
        if operator == "$eq":
            return column.equals_any([operand])
        if operator == "$ne":
            return ~column.equals_any([operand])
        if operator == "$in":
            return column.equals_any(operand)
        if operator == "$nin":
            return ~column.equals_any(operand)
        return column.compare(operator, operand)
