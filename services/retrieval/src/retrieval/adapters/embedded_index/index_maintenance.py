"""The embedded vector index's work in the background: compactions and graph additions.

Writes append rows and clear the live bit of the rows they replace or delete. When the records
written or deleted since the last snapshot pass ``max(compact_min_changes, COMPACT_RATIO x the
snapshot)``, a compaction writes a new snapshot of the live rows, builds a new graph when the
namespace is large, and replaces the logs it holds (``namespace_files`` tells how a crash at
any step is recovered). New rows reach the graph in the background; until then they are
searched exactly (``vector_search``). A write waits when more than ``MAX_UNINDEXED`` rows wait
for the graph.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any

import structlog

from retrieval.adapters.embedded_index.ann_graph import ADD_CHUNK, HnswAnnGraph
from retrieval.adapters.embedded_index.index_namespaces import IndexNamespaces
from retrieval.adapters.embedded_index.namespace_files import NamespaceFiles, write_snapshot
from retrieval.adapters.embedded_index.rows import Frozen, NamespaceRows

COMPACT_MIN_CHANGES = 20_000
COMPACT_RATIO = 0.5
MAX_UNINDEXED = 20_000

log = structlog.get_logger(__name__)


@dataclass(eq=False)
class IndexMaintenance:
    """Compacts the namespaces of ``namespaces`` and adds their new rows to their graphs, in
    tasks of its own; a compaction changes a namespace under ``write_lock``, the writers'."""

    namespaces: IndexNamespaces
    write_lock: asyncio.Lock
    _: KW_ONLY
    ann_min_vectors: int
    compact_min_changes: int
    _tasks: dict[tuple[str, str], asyncio.Task[None]] = field(init=False, default_factory=dict)
    _stopped: bool = field(init=False, default=False)

    def stop(self) -> None:
        """Start no more work; graph additions under way end after their current chunk."""
        self._stopped = True

    async def finish(self) -> None:
        """Wait for the work under way."""
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)

    async def settle(self) -> None:
        """Wait until no compaction runs and every row is in its namespace's graph."""
        while self._tasks:
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)

    def maintain(self, namespace: str, rows: NamespaceRows) -> None:
        """Start what the namespace needs in the background: a compaction, graph additions."""
        if self._stopped:
            return
        large = rows.size >= self.ann_min_vectors
        overgrown = rows.changes > max(self.compact_min_changes, COMPACT_RATIO * rows.base)
        if overgrown or (large and rows.graph is None):
            self._start("compact", namespace, self._compact(namespace, rows))
        if rows.graph is not None and rows.graph.size < rows.count:
            self._start("index", namespace, self._index(namespace))

    async def wait_for_graph(self, namespace: str) -> None:
        """Hold a writer back while more than ``MAX_UNINDEXED`` rows wait for the graph."""
        while (rows := self.namespaces.rows.get(namespace)) is not None and rows.graph is not None:
            indexing = self._tasks.get(("index", namespace))
            if indexing is None or rows.count - rows.graph.size <= MAX_UNINDEXED:
                return
            await asyncio.shield(indexing)

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
        while not self._stopped:
            rows = self.namespaces.rows.get(namespace)
            if rows is None or rows.graph is None or rows.graph.size >= rows.count:
                return
            start = rows.graph.size
            chunk = rows.vectors[start : start + ADD_CHUNK].copy()
            await asyncio.to_thread(rows.graph.add, chunk)

    async def _compact(self, namespace: str, rows: NamespaceRows) -> None:
        async with self.write_lock:
            if self._stopped or self.namespaces.rows.get(namespace) is not rows:
                return
            frozen = rows.freeze()
            kept = rows.graph if frozen.live.all() else None
            namespace_log = self.namespaces.logs.get(namespace)
            files = None if namespace_log is None else namespace_log.files
            generation = (
                0 if namespace_log is None else await asyncio.to_thread(namespace_log.rotate)
            )
        started = asyncio.get_running_loop().time()
        dense, graph, snapshot, saved_graph = await asyncio.to_thread(
            self._compacted, frozen, kept, files, generation
        )
        async with self.write_lock:
            if self.namespaces.rows.get(namespace) is not rows:
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
            self.namespaces.rows[namespace] = fresh
            if kept is None:
                self.namespaces.saved_graphs[namespace] = 0 if graph is None else graph.size
            self.maintain(namespace, fresh)

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
        if graph is None and dense.size >= self.ann_min_vectors:
            graph = HnswAnnGraph.build(dense.vectors)
        if files is None:
            return dense, graph, None, None
        snapshot = write_snapshot(files.directory, dense, generation)
        built = graph is not None and kept is None
        return dense, graph, snapshot, graph.write(files.graph) if built else None
