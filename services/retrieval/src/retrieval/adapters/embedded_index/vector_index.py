"""An in-process vector index with Pinecone's semantics, persisted to disk (docs/index.md).

Search is exact, or through an HNSW graph in a large namespace (``vector_search``). Writes
cost what their batch does: each is one record appended to the namespace's write-ahead log
and synced, then applied to the rows in memory (``index_namespaces``): an upsert appends rows,
a delete or overwrite clears the live bit of the old ones. Compactions and graph additions run
in the background (``index_maintenance``), so every query sees every write it follows.

An index on disk holds its directory (``DirectoryLock``) until ``close``: a second process,
whose rows would go stale and whose writes would drop the other's, is refused with
``DataDirectoryInUseError``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import numpy as np

from retrieval.adapters.data_directory.disk_usage import directory_bytes
from retrieval.adapters.data_directory.lock import DirectoryLock, hold_and_load
from retrieval.adapters.embedded_index.index_maintenance import (
    COMPACT_MIN_CHANGES,
    IndexMaintenance,
)
from retrieval.adapters.embedded_index.index_namespaces import IndexNamespaces
from retrieval.adapters.embedded_index.rows import NamespaceRows
from retrieval.adapters.embedded_index.vector_search import (
    ANN_MIN_VECTORS,
    EXACT_SUBSET_ROWS,
    best_first,
    exact_rows,
    graph_rows,
    searches_exactly,
    unit_rows,
)
from retrieval.adapters.embedded_index.write_ahead_log import Deleted, Upserted
from retrieval.domain.collection_health import Footprint
from retrieval.domain.filters import parse_delete_selector, parse_filter
from retrieval.domain.metadata import copied
from retrieval.domain.vectors import (
    NO_METADATA,
    IndexStats,
    NamespaceStats,
    QueryMatch,
    VectorRecord,
    check_finite,
)
from retrieval.errors import BackendError, InvalidRequestError, NamespaceNotFoundError
from retrieval.ports.vector_index import MetadataFilter, id_pages


class EmbeddedVectorIndex:
    """Cosine search with metadata filters; ``path=None`` keeps it in memory only."""

    def __init__(
        self,
        path: Path | None = None,
        *,
        ann_min_vectors: int = ANN_MIN_VECTORS,
        exact_subset_rows: int = EXACT_SUBSET_ROWS,
        compact_min_changes: int = COMPACT_MIN_CHANGES,
    ) -> None:
        self._path = path
        self._ann_min_vectors = ann_min_vectors
        self._exact_subset_rows = exact_subset_rows
        self._namespaces = IndexNamespaces(path)
        self._write_lock = asyncio.Lock()
        self._maintenance = IndexMaintenance(
            self._namespaces,
            self._write_lock,
            ann_min_vectors=ann_min_vectors,
            compact_min_changes=compact_min_changes,
        )
        self._closed = False
        self._directory: DirectoryLock | None = None
        if path is not None:
            self._directory = hold_and_load(path, self._namespaces.load)

    async def close(self) -> None:
        """Let a write and a compaction in progress finish, stop adding rows to the graphs,
        save the graphs that grew, then release the directory; later calls raise."""
        async with self._write_lock:
            if self._closed:
                return
            self._closed = True
            self._maintenance.stop()
        await self._maintenance.finish()
        if self._path is not None:
            await asyncio.to_thread(self._namespaces.save_graphs)
            self._namespaces.close_logs()
        if self._directory is not None:
            self._directory.release()

    async def settle(self) -> None:
        """Wait until no compaction runs and every row is in its namespace's graph."""
        await self._maintenance.settle()

    def _check_open(self) -> None:
        if self._closed:
            where = f"at {self._path}" if self._path is not None else "in memory"
            raise BackendError(f"the vector index {where} is closed")

    async def upsert(self, records: Sequence[VectorRecord], namespace: str) -> int:
        if not records:
            return 0
        dimensions = {len(record.values) for record in records}
        expected = self._namespaces.dimension or next(iter(dimensions))
        if dimensions != {expected}:
            raise InvalidRequestError(
                f"vectors of dimension {sorted(dimensions)} in an index of {expected}",
                field="values",
            )
        for record in records:
            check_finite(record.values, field="values", owner=record.id)
        upserted = Upserted(
            tuple(record.id for record in records),
            unit_rows(np.array([record.values for record in records], dtype=np.float32)),
            tuple(copied(record.metadata) for record in records),
        )
        async with self._write_lock:
            self._check_open()
            await self._namespaces.write_log(namespace, upserted)
            self._namespaces.dimension = expected
            rows = self._namespaces.rows.get(namespace) or NamespaceRows.empty(expected)
            rows.upsert(upserted.ids, upserted.vectors, upserted.metadata)
            self._namespaces.rows[namespace] = rows
            self._maintenance.maintain(namespace, rows)
        await self._maintenance.wait_for_graph(namespace)
        return len(records)

    async def query(
        self,
        vector: Sequence[float],
        *,
        top_k: int,
        namespace: str,
        filter: MetadataFilter | None = None,
        include_values: bool = False,
        include_metadata: bool = True,
    ) -> list[QueryMatch]:
        self._check_open()
        expression = parse_filter(filter)
        rows = self._namespaces.rows.get(namespace)
        if rows is None:
            raise NamespaceNotFoundError(namespace)
        check_finite(vector, field="vector")
        query = np.asarray(vector, dtype=np.float32)
        dimension = self._namespaces.dimension
        if query.shape != (dimension,):
            raise InvalidRequestError(
                f"query of shape {query.shape} in an index of dimension {dimension}",
                field="vector",
            )
        if top_k < 1:
            raise InvalidRequestError("top_k must be at least 1", field="top_k")
        norm = float(np.linalg.norm(query))
        if norm == 0:
            raise InvalidRequestError("an all-zero query has no direction", field="vector")
        query = query / norm
        self._maintenance.maintain(namespace, rows)
        mask = rows.mask(expression)
        allowed = int(np.count_nonzero(mask))
        top_k = min(top_k, allowed)
        if top_k == 0:
            return []
        ids, vectors, metadata = rows.ids, rows.vectors, rows.metadata
        exactly = searches_exactly(
            rows,
            allowed,
            filtered=expression is not None,
            ann_min_vectors=self._ann_min_vectors,
            exact_subset_rows=self._exact_subset_rows,
        )
        if exactly:
            found, scores = exact_rows(vectors, query, mask, allowed, top_k)
        else:
            found = await graph_rows(rows, query, mask, top_k)
            scores = vectors[found] @ query
        new = tuple.__new__  # a third of the cost of QueryMatch._make
        return [
            new(
                QueryMatch,
                (
                    ids[row],
                    score,
                    tuple(vectors[row].tolist()) if include_values else None,
                    metadata[row] if include_metadata else NO_METADATA,
                ),
            )
            for row, score in best_first(found, scores, ids)[:top_k]
        ]

    async def fetch(self, ids: Sequence[str], namespace: str) -> dict[str, VectorRecord]:
        """The records as stored: values are the unit vectors ``query`` returns."""
        self._check_open()
        rows = self._namespaces.rows.get(namespace)
        if rows is None:
            return {}
        return {
            record_id: rows.record(rows.row_of[record_id])
            for record_id in ids
            if record_id in rows.row_of
        }

    async def delete(
        self,
        *,
        namespace: str,
        ids: Sequence[str] | None = None,
        filter: MetadataFilter | None = None,
        delete_all: bool = False,
    ) -> None:
        expression = parse_delete_selector(ids, filter, delete_all)
        async with self._write_lock:
            self._check_open()
            rows = self._namespaces.rows.get(namespace)
            if rows is None:
                return
            if delete_all:
                doomed = tuple(rows.row_of)
            elif ids is not None:
                doomed = tuple(i for i in dict.fromkeys(ids) if i in rows.row_of)
            else:
                doomed = tuple(rows.ids[row] for row in np.flatnonzero(rows.mask(expression)))
            if len(doomed) == rows.size:
                await self._namespaces.drop(namespace)
            elif doomed:
                await self._namespaces.write_log(namespace, Deleted(doomed))
                rows.delete(doomed)
                self._maintenance.maintain(namespace, rows)

    async def stats(self) -> IndexStats:
        self._check_open()
        namespaces = {
            name: NamespaceStats(vector_count=rows.size)
            for name, rows in self._namespaces.rows.items()
        }
        return IndexStats(
            dimension=self._namespaces.dimension,
            total_vector_count=sum(ns.vector_count for ns in namespaces.values()),
            namespaces=namespaces,
        )

    async def footprint(self) -> Footprint:
        """Its directory on disk (None when kept in memory only) and, in memory, the rows
        held (``rows * dimension * 4`` bytes of float32, deleted rows until the next
        compaction) and the HNSW graphs (their own copy of the vectors and their links)."""
        disk = None if self._path is None else await asyncio.to_thread(directory_bytes, self._path)
        memory = sum(rows.nbytes for rows in self._namespaces.rows.values())
        return Footprint(store="vector index (exact)", disk_bytes=disk, memory_bytes=memory)

    async def list_ids(
        self, namespace: str, *, prefix: str | None = None
    ) -> AsyncIterator[list[str]]:
        self._check_open()
        rows = self._namespaces.rows.get(namespace)
        if rows is None:
            return
        for page in id_pages(rows.row_of, prefix):
            yield page
