"""Vectorised evaluation of metadata filters over many records at once.

Gives the same answers as ``filters.evaluate`` record by record (a property test holds
them together) but compares numpy columns, so a filter over 10,000 records costs
microseconds. Columns are built per field on first use. The records may grow (records are
appended, never changed): a column built earlier takes in the records appended since when it
is next used.
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
        self.present = np.zeros(0, dtype=bool)
        self.codes = np.full(0, MISSING_CODE, dtype=np.int32)
        self.numbers = np.full(0, np.nan, dtype=np.float64)
        self.bools = np.full(0, -1, dtype=np.int8)
        self.vocabulary: dict[str, int] = {}
        self.lists: dict[int, frozenset[str]] = {}
        self.extend(values)

    @property
    def size(self) -> int:
        return self.present.shape[0]

    def extend(self, values: Sequence[Any]) -> None:
        """Take in the values of records appended after those the column holds."""
        start, size = self.size, len(values)
        present = np.zeros(size, dtype=bool)
        codes = np.full(size, MISSING_CODE, dtype=np.int32)
        numbers = np.full(size, np.nan, dtype=np.float64)
        bools = np.full(size, -1, dtype=np.int8)
        for row, value in enumerate(values):
            if value is _ABSENT:
                continue
            present[row] = True
            if isinstance(value, bool):
                bools[row] = int(value)
            elif isinstance(value, str):
                codes[row] = self.vocabulary.setdefault(value, len(self.vocabulary))
            elif is_number(value):
                numbers[row] = value
            elif isinstance(value, list):
                self.lists[start + row] = frozenset(value)
        self.present = np.concatenate([self.present, present])
        self.codes = np.concatenate([self.codes, codes])
        self.numbers = np.concatenate([self.numbers, numbers])
        self.bools = np.concatenate([self.bools, bools])

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
    """Filter masks over a list of metadata records that only grows at its end."""

    def __init__(self, records: Sequence[Mapping[str, Any]]) -> None:
        self._records = records
        self._columns: dict[str, FieldColumn] = {}

    @property
    def size(self) -> int:
        return len(self._records)

    def column(self, field: str) -> FieldColumn:
        column = self._columns.get(field)
        if column is None:
            column = self._columns[field] = FieldColumn(self._values(field, 0))
        elif column.size < self.size:
            column.extend(self._values(field, column.size))
        return column

    def _values(self, field: str, start: int) -> list[Any]:
        return [record.get(field, _ABSENT) for record in self._records[start:]]

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
