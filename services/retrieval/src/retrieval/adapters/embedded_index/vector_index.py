"""An in-process vector index with Pinecone's semantics, persisted to disk (docs/index.md).

Search is exact (numpy, cosine similarity) and so the reference; a namespace of at least
``ann_min_vectors`` records is searched through an HNSW graph (``ann_graph``) instead,
except when a filter keeps so few records (``exact_subset_rows``, or ``EXACT_SUBSET_SHARE``
of the namespace) that scoring them all is as fast and exact. Scores are cosine similarities
of the stored vectors either way: the graph's finds are scored again from them.

Writes cost what their batch does: each is one record appended to the namespace's write-ahead
log and synced (``vector_log``), then applied to the rows in memory (``vector_rows``): an upsert
appends rows, a delete or overwrite clears the live bit of the old ones. When the records
written or deleted since the last snapshot pass ``max(compact_min_changes, COMPACT_RATIO x
the snapshot)``, a compaction in the background writes a new snapshot of the live rows,
builds a new graph when the namespace is large, and replaces the logs it holds
(``vector_files`` tells how a crash at any step is recovered). New rows reach the graph in
the background; until then they are searched exactly, so every query sees every write it
follows. A write waits when more than ``MAX_UNINDEXED`` rows wait for the graph.

An index on disk holds its directory (``DirectoryLock``) until ``close``: a second process,
whose rows would go stale and whose writes would drop the other's, is refused with
``DataDirectoryInUseError``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Coroutine, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import structlog

from retrieval.adapters.data_directory.disk_usage import directory_bytes
from retrieval.adapters.data_directory.durable_files import TEMPORARY_SUFFIX, write_atomically
from retrieval.adapters.data_directory.lock import DirectoryLock, hold_and_load
from retrieval.adapters.embedded_index.ann_graph import (
    ADD_CHUNK,
    HnswAnnGraph,
    allowed_bitmap,
    ef_for,
)
from retrieval.adapters.embedded_index.namespace_files import (
    NamespaceFiles,
    NamespaceLog,
    namespaces_on_disk,
    write_snapshot,
)
from retrieval.adapters.embedded_index.rows import Frozen, NamespaceRows
from retrieval.adapters.embedded_index.write_ahead_log import Cleared, Deleted, Operation, Upserted
from retrieval.domain.collection_health import Footprint
from retrieval.domain.filters import parse_delete_selector, parse_filter
from retrieval.domain.metadata import copied
from retrieval.domain.metadata_columns import Mask
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

Matrix = npt.NDArray[np.float32]
Rows = npt.NDArray[np.intp]
Scores = npt.NDArray[np.float32]
Hit = tuple[int, float]
"""A row of a namespace and its score."""
MANIFEST = "index.json"

ANN_MIN_VECTORS = 50_000
"""Records from which a namespace is searched through its HNSW graph (docs/index.md)."""
EXACT_SUBSET_ROWS = 10_000
EXACT_SUBSET_SHARE = 0.025
"""A filter keeping fewer records than this, or than this share of the namespace, is answered
exactly even in a namespace with a graph: scoring them all is about as fast, and exact. The
exact cost grows with the records kept (about 0.2 µs each), the graph's with the namespace as
a selective filter makes it search wider: over 105,000 records a filter keeping 10,500 was
0.3 ms faster exactly; over 1,005,000, one keeping 10,050 took 2.5 ms exactly against 6.3 ms
through the graph (recall 0.966), one keeping 100,500 21 ms against 3.5 ms (docs/index.md)."""
COMPACT_MIN_CHANGES = 20_000
COMPACT_RATIO = 0.5
MAX_UNINDEXED = 20_000

log = structlog.get_logger(__name__)


def unit_rows(values: Matrix) -> Matrix:
    norms = np.linalg.norm(values, axis=1, keepdims=True)
    if np.any(norms == 0):
        raise InvalidRequestError("an all-zero vector has no direction", field="values")
    return (values / norms).astype(np.float32)


def top_rows(scores: Scores, top_k: int) -> Rows:
    """The positions of the ``top_k`` highest scores, in no particular order."""
    size = scores.shape[0]
    if top_k >= size:
        return np.arange(size)
    return np.argpartition(scores, size - top_k)[size - top_k :]


def exact_rows(
    vectors: Matrix, query: Matrix, mask: Mask, allowed: int, top_k: int
) -> tuple[Rows, Scores]:
    """The ``top_k`` rows ``mask`` keeps nearest ``query``, by scoring every one of them, and
    their scores."""
    if 2 * allowed >= mask.shape[0]:
        scores = vectors[: mask.shape[0]] @ query
        if allowed < mask.shape[0]:
            scores[~mask] = -np.inf
        best = top_rows(scores, top_k)
        return best, scores[best]
    subset = np.flatnonzero(mask)
    scores = vectors[subset] @ query
    best = top_rows(scores, top_k)
    return subset[best], scores[best]


def best_first(found: Rows, scores: Scores, ids: Sequence[str]) -> list[Hit]:
    """``(row, score)`` of the rows ``found``, best score first, ties by id."""
    order = np.argsort(-scores, kind="stable")
    ordered = scores[order]
    if np.any(ordered[1:] == ordered[:-1]):
        return sorted(
            zip(found.tolist(), scores.tolist(), strict=True),
            key=lambda hit: (-hit[1], ids[hit[0]]),
        )
    return list(zip(found[order].tolist(), ordered.tolist(), strict=True))


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
        self._compact_min_changes = compact_min_changes
        self._dimension: int | None = None
        self._namespaces: dict[str, NamespaceRows] = {}
        self._logs: dict[str, NamespaceLog] = {}
        self._saved_graphs: dict[str, int] = {}
        self._tasks: dict[tuple[str, str], asyncio.Task[None]] = {}
        self._write_lock = asyncio.Lock()
        self._closed = False
        self._directory: DirectoryLock | None = None
        if path is not None:
            self._directory = hold_and_load(path, self._load)

    async def close(self) -> None:
        """Let a write and a compaction in progress finish, stop adding rows to the graphs,
        save the graphs that grew, then release the directory; later calls raise."""
        async with self._write_lock:
            if self._closed:
                return
            self._closed = True
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        if self._path is not None:
            await asyncio.to_thread(self._save_graphs)
            for namespace_log in self._logs.values():
                namespace_log.close()
        if self._directory is not None:
            self._directory.release()

    async def settle(self) -> None:
        """Wait until no compaction runs and every row is in its namespace's graph."""
        while self._tasks:
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)

    def _check_open(self) -> None:
        if self._closed:
            where = f"at {self._path}" if self._path is not None else "in memory"
            raise BackendError(f"the vector index {where} is closed")

    async def upsert(self, records: Sequence[VectorRecord], namespace: str) -> int:
        if not records:
            return 0
        dimensions = {len(record.values) for record in records}
        expected = self._dimension or next(iter(dimensions))
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
            await self._write_log(namespace, upserted)
            self._dimension = expected
            rows = self._namespaces.get(namespace) or NamespaceRows.empty(expected)
            rows.upsert(upserted.ids, upserted.vectors, upserted.metadata)
            self._namespaces[namespace] = rows
            self._maintain(namespace, rows)
        await self._wait_for_graph(namespace)
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
        rows = self._namespaces.get(namespace)
        if rows is None:
            raise NamespaceNotFoundError(namespace)
        check_finite(vector, field="vector")
        query = np.asarray(vector, dtype=np.float32)
        if query.shape != (self._dimension,):
            raise InvalidRequestError(
                f"query of shape {query.shape} in an index of dimension {self._dimension}",
                field="vector",
            )
        if top_k < 1:
            raise InvalidRequestError("top_k must be at least 1", field="top_k")
        norm = float(np.linalg.norm(query))
        if norm == 0:
            raise InvalidRequestError("an all-zero query has no direction", field="vector")
        query = query / norm
        self._maintain(namespace, rows)
        mask = rows.mask(expression)
        allowed = int(np.count_nonzero(mask))
        top_k = min(top_k, allowed)
        if top_k == 0:
            return []
        ids, vectors, metadata = rows.ids, rows.vectors, rows.metadata
        if self._searches_exactly(rows, allowed, filtered=expression is not None):
            found, scores = exact_rows(vectors, query, mask, allowed, top_k)
        else:
            found = await self._search_graph(rows, query, mask, top_k)
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

    def _searches_exactly(self, rows: NamespaceRows, allowed: int, *, filtered: bool) -> bool:
        if rows.graph is None or rows.size < self._ann_min_vectors:
            return True
        return filtered and allowed < max(self._exact_subset_rows, EXACT_SUBSET_SHARE * rows.size)

    async def _search_graph(
        self, rows: NamespaceRows, query: Matrix, mask: Mask, top_k: int
    ) -> Rows:
        """The graph's best rows among those ``mask`` keeps, with every row it does not hold
        yet: candidates for the caller to score and cut to ``top_k``."""
        assert rows.graph is not None
        indexed = min(rows.graph.size, mask.shape[0])
        in_graph = mask[:indexed]
        kept = int(np.count_nonzero(in_graph))
        unindexed = indexed + np.flatnonzero(mask[indexed:])
        if kept == 0:
            return unindexed
        wanted = min(top_k, kept)
        ef = ef_for(wanted, kept / indexed)
        found = await asyncio.to_thread(
            rows.graph.search, query, wanted, allowed_bitmap(in_graph), ef
        )
        if found.shape[0] < wanted:
            log.info("index_graph_search_short", wanted=wanted, found=found.shape[0], ef=ef)
            found, _ = exact_rows(rows.vectors, query, in_graph, kept, wanted)
        return np.concatenate([found, unindexed])

    async def fetch(self, ids: Sequence[str], namespace: str) -> dict[str, VectorRecord]:
        """The records as stored: values are the unit vectors ``query`` returns."""
        self._check_open()
        rows = self._namespaces.get(namespace)
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
            rows = self._namespaces.get(namespace)
            if rows is None:
                return
            if delete_all:
                doomed = tuple(rows.row_of)
            elif ids is not None:
                doomed = tuple(i for i in dict.fromkeys(ids) if i in rows.row_of)
            else:
                doomed = tuple(rows.ids[row] for row in np.flatnonzero(rows.mask(expression)))
            if len(doomed) == rows.size:
                await self._drop(namespace)
            elif doomed:
                await self._write_log(namespace, Deleted(doomed))
                rows.delete(doomed)
                self._maintain(namespace, rows)

    async def stats(self) -> IndexStats:
        self._check_open()
        namespaces = {
            name: NamespaceStats(vector_count=rows.size) for name, rows in self._namespaces.items()
        }
        return IndexStats(
            dimension=self._dimension,
            total_vector_count=sum(ns.vector_count for ns in namespaces.values()),
            namespaces=namespaces,
        )

    async def footprint(self) -> Footprint:
        """Its directory on disk (None when kept in memory only) and, in memory, the rows
        held (``rows * dimension * 4`` bytes of float32, deleted rows until the next
        compaction) and the HNSW graphs (their own copy of the vectors and their links)."""
        disk = None if self._path is None else await asyncio.to_thread(directory_bytes, self._path)
        memory = sum(rows.nbytes for rows in self._namespaces.values())
        return Footprint(store="vector index (exact)", disk_bytes=disk, memory_bytes=memory)

    async def list_ids(
        self, namespace: str, *, prefix: str | None = None
    ) -> AsyncIterator[list[str]]:
        self._check_open()
        rows = self._namespaces.get(namespace)
        if rows is None:
            return
        for page in id_pages(rows.row_of, prefix):
            yield page

    async def _write_log(self, namespace: str, operation: Operation) -> None:
        """Append ``operation`` to the namespace's log, synced (the index's dimension is saved
        before its first record); in memory only, nothing."""
        if self._path is None:
            return
        namespace_log = self._logs.get(namespace)
        if namespace_log is None:
            namespace_log = NamespaceLog(NamespaceFiles(self._path, namespace), 0)
            self._logs[namespace] = namespace_log
        manifest = self._path / MANIFEST

        def append() -> None:
            if isinstance(operation, Upserted) and not manifest.exists():
                dimension = operation.vectors.shape[1]
                write_atomically(manifest, json.dumps({"dimension": dimension}).encode())
            namespace_log.append(operation)

        await asyncio.to_thread(append)

    async def _drop(self, namespace: str) -> None:
        """Forget the namespace: a ``Cleared`` record first, then its files."""
        namespace_log = self._logs.pop(namespace, None)
        if namespace_log is not None:

            def remove() -> None:
                namespace_log.append(Cleared())
                namespace_log.close()
                namespace_log.files.remove()

            await asyncio.to_thread(remove)
        self._namespaces.pop(namespace, None)
        self._saved_graphs.pop(namespace, None)

    def _maintain(self, namespace: str, rows: NamespaceRows) -> None:
        """Start what the namespace needs in the background: a compaction, graph additions."""
        if self._closed:
            return
        large = rows.size >= self._ann_min_vectors
        overgrown = rows.changes > max(self._compact_min_changes, COMPACT_RATIO * rows.base)
        if overgrown or (large and rows.graph is None):
            self._start("compact", namespace, self._compact(namespace, rows))
        if rows.graph is not None and rows.graph.size < rows.count:
            self._start("index", namespace, self._index(namespace))

    def _start(self, kind: str, namespace: str, work: Coroutine[Any, Any, None]) -> None:
        key = (kind, namespace)
        if key in self._tasks:
            work.close()
            return
        task = asyncio.get_running_loop().create_task(self._logged(kind, namespace, work))
        self._tasks[key] = task
        task.add_done_callback(lambda _: self._tasks.pop(key, None))

    @staticmethod
    async def _logged(kind: str, namespace: str, work: Coroutine[Any, Any, None]) -> None:
        try:
            await work
        except Exception:
            log.exception("index_background_work_failed", work=kind, namespace=namespace)

    async def _index(self, namespace: str) -> None:
        """Add the rows its graph lacks to the namespace as it is now (a compaction may
        replace its rows and graph meanwhile), a chunk at a time."""
        while not self._closed:
            rows = self._namespaces.get(namespace)
            if rows is None or rows.graph is None or rows.graph.size >= rows.count:
                return
            start = rows.graph.size
            chunk = rows.vectors[start : start + ADD_CHUNK].copy()
            await asyncio.to_thread(rows.graph.add, chunk)

    async def _wait_for_graph(self, namespace: str) -> None:
        """Hold a writer back while more than ``MAX_UNINDEXED`` rows wait for the graph."""
        while (rows := self._namespaces.get(namespace)) is not None and rows.graph is not None:
            indexing = self._tasks.get(("index", namespace))
            if indexing is None or rows.count - rows.graph.size <= MAX_UNINDEXED:
                return
            await asyncio.shield(indexing)

    async def _compact(self, namespace: str, rows: NamespaceRows) -> None:
        async with self._write_lock:
            if self._closed or self._namespaces.get(namespace) is not rows:
                return
            frozen = rows.freeze()
            kept = rows.graph if frozen.live.all() else None
            namespace_log = self._logs.get(namespace)
            files = None if namespace_log is None else namespace_log.files
            generation = (
                0 if namespace_log is None else await asyncio.to_thread(namespace_log.rotate)
            )
        started = asyncio.get_running_loop().time()
        dense, graph, snapshot, saved_graph = await asyncio.to_thread(
            self._compacted, frozen, kept, files, generation
        )
        async with self._write_lock:
            if self._namespaces.get(namespace) is not rows:
                for temporary in (snapshot, saved_graph):
                    if temporary is not None:
                        temporary.unlink(missing_ok=True)
                return
            if files is not None and snapshot is not None:
                await asyncio.to_thread(
                    files.commit, snapshot, saved_graph, generation, keep_graph=kept is not None
                )
            log.info(
                "index_compacted",
                namespace=namespace,
                records=dense.size,
                dropped_rows=frozen.count - dense.size,
                graph="kept" if kept is not None else "built" if graph is not None else None,
                seconds=round(asyncio.get_running_loop().time() - started, 3),
            )
            fresh = rows.rebased(frozen, dense)
            fresh.graph = graph
            self._namespaces[namespace] = fresh
            if kept is None:
                self._saved_graphs[namespace] = 0 if graph is None else graph.size
            self._maintain(namespace, fresh)

    def _compacted(
        self,
        frozen: Frozen,
        kept: HnswAnnGraph | None,
        files: NamespaceFiles | None,
        generation: int,
    ) -> tuple[NamespaceRows, HnswAnnGraph | None, Path | None, Path | None]:
        """The live rows of ``frozen``, their graph when they are many, and (on disk) the
        temporary files of the next snapshot and of a new graph. ``kept``: the graph of
        ``frozen`` when all its rows are live, so the compacted rows are the same rows in the
        same order and its slots (and its file) still fit them: it is kept, not rebuilt."""
        dense = frozen.dense()
        graph = kept
        if graph is None and dense.size >= self._ann_min_vectors:
            graph = HnswAnnGraph.build(dense.vectors)
        if files is None:
            return dense, graph, None, None
        snapshot = write_snapshot(files.directory, dense, generation)
        built = graph is not None and kept is None
        return dense, graph, snapshot, graph.write(files.graph) if built else None

    def _save_graphs(self) -> None:
        """Save each graph that grew since it was last saved, so a restart need not add
        those rows again."""
        for namespace, rows in self._namespaces.items():
            graph = rows.graph
            if graph is not None and graph.size > self._saved_graphs.get(namespace, 0):
                self._logs[namespace].files.save_graph(graph)

    def _load(self, path: Path) -> None:
        for leftover in path.glob(f"*{TEMPORARY_SUFFIX}"):
            leftover.unlink()
        manifest = path / MANIFEST
        if not manifest.exists():
            return
        self._dimension = json.loads(manifest.read_text())["dimension"]
        for namespace in namespaces_on_disk(path):
            rows, namespace_log = NamespaceFiles(path, namespace).load(self._dimension)
            self._logs[namespace] = namespace_log
            if rows is not None:
                self._namespaces[namespace] = rows
                self._saved_graphs[namespace] = 0 if rows.graph is None else rows.graph.size
