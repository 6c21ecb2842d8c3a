"""The records of one namespace in memory, as rows in the order they were written.

An upsert appends rows; it and a delete clear the live bit of the rows they replace or remove
(tombstones). Nothing else changes a row, so a view of the first ``n`` rows stays valid while
rows are appended, and a compaction can copy the live rows in a worker thread from a
``Frozen`` picture taken between two writes. Replaying a namespace's log over its snapshot
appends the same rows in the same order as the writes did: row numbers (and so the slots of
the HNSW graph) come out the same after a restart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from retrieval.adapters.embedded_index.ann_graph import HnswAnnGraph
from retrieval.adapters.embedded_index.write_ahead_log import Cleared, Deleted, Operation, Upserted
from retrieval.domain.filters import Expression
from retrieval.domain.metadata import copied
from retrieval.domain.metadata_columns import Mask, MetadataColumns
from retrieval.domain.vectors import VectorRecord

Matrix = npt.NDArray[np.float32]


class Growable:
    """An array whose rows are appended in place (its buffer doubles when full)."""

    def __init__(self, initial: npt.NDArray[Any], capacity: int = 0) -> None:
        self.count = initial.shape[0]
        self._buffer = initial
        if capacity > self.count:
            self._buffer = np.empty((capacity, *initial.shape[1:]), initial.dtype)
            self._buffer[: self.count] = initial

    def append(self, rows: npt.NDArray[Any]) -> None:
        needed = self.count + rows.shape[0]
        if needed > self._buffer.shape[0]:
            grown = np.empty((max(needed, 2 * self._buffer.shape[0]), *rows.shape[1:]), rows.dtype)
            grown[: self.count] = self._buffer[: self.count]
            self._buffer = grown
        self._buffer[self.count : needed] = rows
        self.count = needed

    @property
    def view(self) -> npt.NDArray[Any]:
        return self._buffer[: self.count]


@dataclass(frozen=True)
class Frozen:
    """The rows of a namespace as they were between two writes."""

    live: npt.NDArray[np.bool_]
    vectors: Matrix
    ids: list[str]
    metadata: list[dict[str, Any]]

    @property
    def count(self) -> int:
        return len(self.ids)

    def dense(self) -> NamespaceRows:
        """The live rows alone, in order (the next snapshot), with room to append as many
        again: the rows written while a compaction runs are appended on the event loop, which
        must not copy the whole namespace into a larger buffer."""
        keep = np.flatnonzero(self.live)
        return NamespaceRows(
            [self.ids[row] for row in keep],
            self.vectors[keep],
            [self.metadata[row] for row in keep],
            capacity=2 * keep.shape[0],
        )


class NamespaceRows:
    """Rows, their live bits, the row of each live id, filter columns, and the HNSW graph of
    the first rows when the namespace is large (``graph``).

    ``base``: rows of the snapshot it was loaded or compacted from; ``changes``: records
    written and deleted since, which decide when to compact.
    """

    def __init__(
        self,
        ids: list[str],
        vectors: Matrix,
        metadata: list[dict[str, Any]],
        *,
        capacity: int = 0,
    ) -> None:
        self.ids = ids
        self.metadata = metadata
        self._vectors = Growable(np.ascontiguousarray(vectors, dtype=np.float32), capacity)
        self._live = Growable(np.ones(len(ids), dtype=bool))
        self.row_of = {record_id: row for row, record_id in enumerate(ids)}
        self.columns = MetadataColumns(self.metadata)
        self.base = len(ids)
        self.changes = 0
        self.graph: HnswAnnGraph | None = None

    @classmethod
    def empty(cls, dimension: int) -> NamespaceRows:
        return cls([], np.empty((0, dimension), dtype=np.float32), [])

    @property
    def count(self) -> int:
        """Rows held, dead ones included."""
        return len(self.ids)

    @property
    def size(self) -> int:
        """Live records."""
        return len(self.row_of)

    @property
    def vectors(self) -> Matrix:
        return self._vectors.view

    @property
    def live(self) -> npt.NDArray[np.bool_]:
        return self._live.view

    @property
    def nbytes(self) -> int:
        return self.vectors.nbytes + (self.graph.nbytes if self.graph is not None else 0)

    def mask(self, expression: Expression | None) -> Mask:
        """The live rows ``expression`` keeps (every live row when it is None)."""
        if expression is None:
            return self.live.copy()
        return self.live & self.columns.mask(expression)

    def record(self, row: int) -> VectorRecord:
        return VectorRecord.model_construct(
            id=self.ids[row],
            values=tuple(self.vectors[row].tolist()),
            metadata=copied(self.metadata[row]),
        )

    def apply(self, operation: Operation) -> NamespaceRows:
        """This namespace after ``operation``; a new one after ``Cleared``."""
        if isinstance(operation, Upserted):
            self.upsert(operation.ids, operation.vectors, operation.metadata)
        elif isinstance(operation, Deleted):
            self.delete(operation.ids)
        elif isinstance(operation, Cleared):
            return NamespaceRows.empty(self.vectors.shape[1])
        return self

    def upsert(self, ids: tuple[str, ...], vectors: Matrix, metadata: tuple[dict, ...]) -> None:
        start = self.count
        self._vectors.append(vectors)
        self._live.append(np.ones(len(ids), dtype=bool))
        self.ids.extend(ids)
        self.metadata.extend(metadata)
        for row, record_id in enumerate(ids, start):
            replaced = self.row_of.get(record_id)
            if replaced is not None:
                self.live[replaced] = False
            self.row_of[record_id] = row
        self.changes += len(ids)

    def delete(self, ids: tuple[str, ...]) -> None:
        for record_id in ids:
            row = self.row_of.pop(record_id, None)
            if row is not None:
                self.live[row] = False
                self.changes += 1

    def freeze(self) -> Frozen:
        return Frozen(self.live.copy(), self.vectors, list(self.ids), list(self.metadata))

    def rebased(self, frozen: Frozen, dense: NamespaceRows) -> NamespaceRows:
        """``dense`` (the live rows of ``frozen``) with what was written since ``frozen`` was
        taken: its rows that died since, and the rows appended since, as they are now."""
        died = np.flatnonzero(frozen.live & ~self.live[: frozen.count])
        dense.delete(tuple(self.ids[row] for row in died))
        start = dense.count
        dense.upsert(
            tuple(self.ids[frozen.count :]),
            self.vectors[frozen.count :],
            tuple(self.metadata[frozen.count :]),
        )
        for row in start + np.flatnonzero(~self.live[frozen.count :]):
            if dense.live[row]:
                dense.live[row] = False
                del dense.row_of[dense.ids[row]]
        dense.changes = self.count - frozen.count + len(died)
        return dense
