"""The namespaces of the embedded vector index: their rows in memory and, on disk, their files.

A namespace's rows (``rows``) change only after the write is in its log (``namespace_files``):
``write_log`` appends and syncs the record, and saves the index's dimension in ``index.json``
before its first record. At start-up every namespace on disk is loaded from its snapshot, its
graph and its logs. An index kept in memory only has rows and no files.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from retrieval.adapters.data_directory.durable_files import TEMPORARY_SUFFIX, write_atomically
from retrieval.adapters.embedded_index.namespace_files import (
    NamespaceFiles,
    NamespaceLog,
    namespaces_on_disk,
)
from retrieval.adapters.embedded_index.rows import NamespaceRows
from retrieval.adapters.embedded_index.write_ahead_log import Cleared, Operation, Upserted

MANIFEST = "index.json"


class IndexNamespaces:
    """Each namespace's rows, its log, and how many rows its graph held when last saved;
    ``path=None``: rows only."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.dimension: int | None = None
        self.rows: dict[str, NamespaceRows] = {}
        self.logs: dict[str, NamespaceLog] = {}
        self.saved_graphs: dict[str, int] = {}

    def load(self, path: Path) -> None:
        """Read every namespace in ``path``, after removing the temporary files a stopped
        compaction left."""
        for leftover in path.glob(f"*{TEMPORARY_SUFFIX}"):
            leftover.unlink()
        manifest = path / MANIFEST
        if not manifest.exists():
            return
        self.dimension = json.loads(manifest.read_text())["dimension"]
        for namespace in namespaces_on_disk(path):
            rows, namespace_log = NamespaceFiles(path, namespace).load(self.dimension)
            self.logs[namespace] = namespace_log
            if rows is not None:
                self.rows[namespace] = rows
                self.saved_graphs[namespace] = 0 if rows.graph is None else rows.graph.size

    async def write_log(self, namespace: str, operation: Operation) -> None:
        """Append ``operation`` to the namespace's log, synced (the index's dimension is saved
        before its first record); in memory only, nothing."""
        if self.path is None:
            return
        namespace_log = self.logs.get(namespace)
        if namespace_log is None:
            namespace_log = NamespaceLog(NamespaceFiles(self.path, namespace), 0)
            self.logs[namespace] = namespace_log
        manifest = self.path / MANIFEST

        def append() -> None:
            if isinstance(operation, Upserted) and not manifest.exists():
                dimension = operation.vectors.shape[1]
                write_atomically(manifest, json.dumps({"dimension": dimension}).encode())
            namespace_log.append(operation)

        await asyncio.to_thread(append)

    async def drop(self, namespace: str) -> None:
        """Forget the namespace: a ``Cleared`` record first, then its files."""
        namespace_log = self.logs.pop(namespace, None)
        if namespace_log is not None:

            def remove() -> None:
                namespace_log.append(Cleared())
                namespace_log.close()
                namespace_log.files.remove()

            await asyncio.to_thread(remove)
        self.rows.pop(namespace, None)
        self.saved_graphs.pop(namespace, None)

    def save_graphs(self) -> None:
        """Save each graph that grew since it was last saved, so a restart need not add
        those rows again."""
        for namespace, rows in self.rows.items():
            graph = rows.graph
            if graph is not None and graph.size > self.saved_graphs.get(namespace, 0):
                self.logs[namespace].files.save_graph(graph)

    def close_logs(self) -> None:
        for namespace_log in self.logs.values():
            namespace_log.close()
