"""The files of one namespace of the embedded vector index, and how they change.

- ``<namespace>.npz``: the snapshot (unit vectors, ids, metadata) as of log ``generation``;
  written by a compaction only (a snapshot without a generation is 0).
- ``<namespace>.<n>.log``: the write-ahead logs (``write_ahead_log``); the namespace is its
  snapshot with the logs numbered above its generation replayed in order. The last is the
  one written to.
- ``<namespace>.hnsw``: the HNSW graph of a large namespace, if saved (faiss
  ``write_index``); used at load only if its slots hold exactly the first rows.

A compaction starts a new log (``NamespaceLog.rotate``), writes the next snapshot and graph to
temporary files while writes go on, then ``commit`` renames the graph and then the snapshot
into place (the rename of the snapshot is the moment the compaction takes effect) and removes
the logs the snapshot holds. Wherever a crash stops it, loading finds the state of every
acknowledged write: the old snapshot with all the logs, or the new one with the logs above it
(older ones are skipped and removed).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from retrieval.adapters.data_directory.durable_files import (
    fsync_directory,
    replace_durably,
    write_temporary,
)
from retrieval.adapters.embedded_index.ann_graph import HnswAnnGraph
from retrieval.adapters.embedded_index.rows import NamespaceRows
from retrieval.adapters.embedded_index.write_ahead_log import LogFile, Operation, encode, read_log

SNAPSHOT_SUFFIX = ".npz"
GRAPH_SUFFIX = ".hnsw"
LOG_NAME = re.compile(r"(?P<namespace>.+)\.(?P<sequence>\d+)\.log")


def namespaces_on_disk(directory: Path) -> list[str]:
    names = {path.stem for path in directory.glob(f"*{SNAPSHOT_SUFFIX}")}
    for path in directory.glob("*.log"):
        if (match := LOG_NAME.fullmatch(path.name)) is not None:
            names.add(match["namespace"])
    return sorted(names)


def write_snapshot(directory: Path, rows: NamespaceRows, generation: int) -> Path:
    """The rows (all live) in a synced temporary file, for ``NamespaceFiles.commit``."""
    return write_temporary(
        directory,
        lambda file: np.savez(
            file,
            vectors=rows.vectors,
            ids=np.array(rows.ids, dtype=str),
            metadata=np.frombuffer(json.dumps(rows.metadata).encode(), dtype=np.uint8),
            generation=np.int64(generation),
        ),
    )


class NamespaceFiles:
    def __init__(self, directory: Path, namespace: str) -> None:
        self.directory = directory
        self.snapshot = directory / f"{namespace}{SNAPSHOT_SUFFIX}"
        self.graph = directory / f"{namespace}{GRAPH_SUFFIX}"
        self._namespace = namespace

    def log(self, sequence: int) -> Path:
        return self.directory / f"{self._namespace}.{sequence}.log"

    def logs(self) -> list[tuple[int, Path]]:
        found = []
        for path in self.directory.glob("*.log"):
            match = LOG_NAME.fullmatch(path.name)
            if match is not None and match["namespace"] == self._namespace:
                found.append((int(match["sequence"]), path))
        return sorted(found)

    def load(self, dimension: int) -> tuple[NamespaceRows | None, NamespaceLog]:
        """The namespace's rows (None when it holds no record) and its log to append to."""
        rows, generation = None, 0
        if self.snapshot.exists():
            with np.load(self.snapshot) as data:
                rows = NamespaceRows(
                    data["ids"].tolist(),
                    data["vectors"],
                    json.loads(data["metadata"].tobytes().decode()),
                )
                generation = int(data["generation"]) if "generation" in data.files else 0
        log = NamespaceLog(self, generation)
        for sequence, path in self.logs():
            if sequence <= generation:
                path.unlink()
                continue
            operations, length = read_log(path)
            for operation in operations:
                rows = (rows or NamespaceRows.empty(dimension)).apply(operation)
            log.reopen(sequence, length)
        if rows is not None and rows.size == 0:
            log.close()
            self.remove()
            return None, NamespaceLog(self, 0)
        if rows is not None:
            rows.graph = HnswAnnGraph.read(self.graph, rows.vectors)
        return rows, log

    def commit(
        self, snapshot: Path, graph: Path | None, generation: int, *, keep_graph: bool = False
    ) -> None:
        """Put a compaction's files in place, then remove the logs up to ``generation``.
        ``keep_graph``: the snapshot holds the rows of the saved graph in the same order,
        which is left as it is."""
        if graph is not None:
            replace_durably(graph, self.graph)
        elif not keep_graph:
            self.graph.unlink(missing_ok=True)
        replace_durably(snapshot, self.snapshot)
        for sequence, path in self.logs():
            if sequence <= generation:
                path.unlink()
        fsync_directory(self.directory)

    def save_graph(self, graph: HnswAnnGraph) -> None:
        replace_durably(graph.write(self.graph), self.graph)

    def remove(self) -> None:
        """Remove every file of the namespace: the snapshot first, the newest log last."""
        self.snapshot.unlink(missing_ok=True)
        self.graph.unlink(missing_ok=True)
        for _, path in self.logs():
            path.unlink()
        fsync_directory(self.directory)


class NamespaceLog:
    """The log a namespace appends to: ``<namespace>.<sequence>.log``, created on first use."""

    def __init__(self, files: NamespaceFiles, generation: int) -> None:
        self.files = files
        self.sequence = generation
        self._file: LogFile | None = None

    def reopen(self, sequence: int, length: int) -> None:
        self.close()
        self.sequence = sequence
        self._file = LogFile(self.files.log(sequence), length)

    def append(self, operation: Operation) -> None:
        if self._file is None:
            self.rotate()
        assert self._file is not None
        self._file.append(encode(operation))

    def rotate(self) -> int:
        """Start the next log; returns the number of the last one a snapshot taken now holds."""
        covered = self.sequence
        self.close()
        self.sequence = covered + 1
        self._file = LogFile(self.files.log(self.sequence))
        fsync_directory(self.files.directory)
        return covered

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
