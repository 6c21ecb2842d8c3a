"""An in-process exact vector index with Pinecone's semantics, persisted to disk.

Each namespace is an immutable snapshot (unit vectors, ids, metadata, filter columns)
replaced whole on every write, so queries never see half a write and need no lock.
A snapshot is saved as one ``<namespace>.npz`` written to a temporary file and renamed
into place: after a crash a namespace is either the old or the new version.

An index on disk holds its directory (``DirectoryLock``) until ``close``: a second process,
whose snapshots would go stale and whose writes would drop the other's, is refused with
``DataDirectoryInUseError``.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from retrieval.adapters.directory_lock import DirectoryLock, hold_and_load
from retrieval.adapters.disk_usage import directory_bytes
from retrieval.domain.collection_health import Footprint
from retrieval.domain.filters import parse_delete_selector, parse_filter
from retrieval.domain.metadata_columns import MetadataColumns
from retrieval.domain.vectors import (
    IndexStats,
    NamespaceStats,
    QueryMatch,
    VectorRecord,
    check_finite,
)
from retrieval.errors import BackendError, InvalidRequestError, NamespaceNotFoundError
from retrieval.ports.vector_index import MetadataFilter, id_pages

Matrix = npt.NDArray[np.float32]
MANIFEST = "index.json"


@dataclass(frozen=True)
class Snapshot:
    ids: tuple[str, ...]
    vectors: Matrix
    metadata: tuple[dict[str, Any], ...]
    columns: MetadataColumns
    rows: dict[str, int]

    @classmethod
    def build(cls, ids: Sequence[str], vectors: Matrix, metadata: Sequence[dict]) -> Snapshot:
        rows = {record_id: row for row, record_id in enumerate(ids)}
        return cls(tuple(ids), vectors, tuple(metadata), MetadataColumns(metadata), rows)

    @property
    def size(self) -> int:
        return len(self.ids)

    def record(self, row: int) -> VectorRecord:
        return VectorRecord.model_construct(
            id=self.ids[row],
            values=tuple(self.vectors[row].tolist()),
            metadata=dict(self.metadata[row]),
        )


def unit_rows(values: Matrix) -> Matrix:
    norms = np.linalg.norm(values, axis=1, keepdims=True)
    if np.any(norms == 0):
        raise InvalidRequestError("an all-zero vector has no direction", field="values")
    return (values / norms).astype(np.float32)


class ExactVectorIndex:
    """Exact cosine search with metadata filters; ``path=None`` keeps it in memory only."""

    def __init__(self, path: Path | None = None) -> None:
        self._path = path
        self._dimension: int | None = None
        self._namespaces: dict[str, Snapshot] = {}
        self._write_lock = asyncio.Lock()
        self._closed = False
        self._directory: DirectoryLock | None = None
        if path is not None:
            self._directory = hold_and_load(path, self._load)

    async def close(self) -> None:
        """Let a write in progress finish, then release the directory; later calls raise."""
        async with self._write_lock:
            self._closed = True
            if self._directory is not None:
                self._directory.release()

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
        fresh = unit_rows(np.array([record.values for record in records], dtype=np.float32))
        async with self._write_lock:
            self._check_open()
            merged: dict[str, tuple[npt.NDArray[np.float32], dict]] = {}
            old = self._namespaces.get(namespace)
            if old is not None:
                merged = {i: (old.vectors[row], old.metadata[row]) for row, i in enumerate(old.ids)}
            for row, record in enumerate(records):
                merged[record.id] = (fresh[row], dict(record.metadata))
            self._dimension = expected
            await self._replace(namespace, merged)
        return len(records)

    async def query(
        self,
        vector: Sequence[float],
        *,
        top_k: int,
        namespace: str,
        filter: MetadataFilter | None = None,
        include_values: bool = False,
    ) -> list[QueryMatch]:
        self._check_open()
        expression = parse_filter(filter)
        snapshot = self._namespaces.get(namespace)
        if snapshot is None:
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
        scores = snapshot.vectors @ (query / norm)
        if expression is not None:
            allowed = snapshot.columns.mask(expression)
            scores = np.where(allowed, scores, -np.inf)
            top_k = min(top_k, int(allowed.sum()))
        found = [(int(row), float(scores[row])) for row in self._top(scores, top_k)]
        found.sort(key=lambda item: (-item[1], snapshot.ids[item[0]]))
        return [
            QueryMatch.model_construct(
                id=snapshot.ids[row],
                score=score,
                values=tuple(snapshot.vectors[row].tolist()) if include_values else None,
                metadata=snapshot.metadata[row],
            )
            for row, score in found
        ]

    async def fetch(self, ids: Sequence[str], namespace: str) -> dict[str, VectorRecord]:
        """The records as stored: values are the unit vectors ``query`` returns."""
        self._check_open()
        snapshot = self._namespaces.get(namespace)
        if snapshot is None:
            return {}
        return {
            record_id: snapshot.record(snapshot.rows[record_id])
            for record_id in ids
            if record_id in snapshot.rows
        }

    @staticmethod
    def _top(scores: npt.NDArray[np.float32], top_k: int) -> npt.NDArray[np.intp]:
        if top_k <= 0:
            return np.empty(0, dtype=np.intp)
        if top_k >= scores.shape[0]:
            return np.argsort(-scores)
        return np.argpartition(-scores, top_k - 1)[:top_k]

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
            snapshot = self._namespaces.get(namespace)
            if snapshot is None:
                return
            if delete_all:
                doomed = set(snapshot.ids)
            elif ids is not None:
                doomed = set(ids)
            else:
                doomed = {
                    snapshot.ids[row] for row in np.flatnonzero(snapshot.columns.mask(expression))
                }
            kept = {
                record_id: (snapshot.vectors[row], snapshot.metadata[row])
                for row, record_id in enumerate(snapshot.ids)
                if record_id not in doomed
            }
            if len(kept) != snapshot.size:
                await self._replace(namespace, kept)

    async def stats(self) -> IndexStats:
        self._check_open()
        namespaces = {
            name: NamespaceStats(vector_count=snapshot.size)
            for name, snapshot in self._namespaces.items()
        }
        return IndexStats(
            dimension=self._dimension,
            total_vector_count=sum(ns.vector_count for ns in namespaces.values()),
            namespaces=namespaces,
        )

    async def footprint(self) -> Footprint:
        """Its directory on disk (None when kept in memory only) and its vectors in memory:
        ``vectors * dimension * 4`` bytes of float32."""
        disk = None if self._path is None else await asyncio.to_thread(directory_bytes, self._path)
        memory = sum(snapshot.vectors.nbytes for snapshot in self._namespaces.values())
        return Footprint(store="vector index (exact)", disk_bytes=disk, memory_bytes=memory)

    async def _replace(self, namespace: str, rows: dict[str, tuple[Any, dict]]) -> None:
        if not rows:
            snapshot = None
        else:
            vectors = np.stack([vector for vector, _ in rows.values()]).astype(np.float32)
            snapshot = Snapshot.build(list(rows), vectors, [meta for _, meta in rows.values()])
        if self._path is not None:
            await asyncio.to_thread(self._save, namespace, snapshot)
        if snapshot is None:
            self._namespaces.pop(namespace, None)
        else:
            self._namespaces[namespace] = snapshot

    def _save(self, namespace: str, snapshot: Snapshot | None) -> None:
        assert self._path is not None
        target = self._path / f"{namespace}.npz"
        if snapshot is None:
            target.unlink(missing_ok=True)
            return
        write_atomically(self._path / MANIFEST, json.dumps({"dimension": self._dimension}).encode())
        with tempfile.NamedTemporaryFile(dir=self._path, suffix=".tmp", delete=False) as handle:
            np.savez(
                handle,
                vectors=snapshot.vectors,
                ids=np.array(snapshot.ids, dtype=str),
                metadata=np.frombuffer(json.dumps(snapshot.metadata).encode(), dtype=np.uint8),
            )
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(handle.name, target)

    def _load(self, path: Path) -> None:
        manifest = path / MANIFEST
        if not manifest.exists():
            return
        self._dimension = json.loads(manifest.read_text())["dimension"]
        for stored in sorted(path.glob("*.npz")):
            with np.load(stored) as data:
                metadata = json.loads(data["metadata"].tobytes().decode())
                self._namespaces[stored.stem] = Snapshot.build(
                    data["ids"].tolist(), data["vectors"], metadata
                )
        for leftover in path.glob("*.tmp"):
            leftover.unlink()

    async def list_ids(
        self, namespace: str, *, prefix: str | None = None
    ) -> AsyncIterator[list[str]]:
        self._check_open()
        snapshot = self._namespaces.get(namespace)
        if snapshot is None:
            return
        for page in id_pages(snapshot.ids, prefix):
            yield page


def write_atomically(target: Path, payload: bytes) -> None:
    with tempfile.NamedTemporaryFile(dir=target.parent, suffix=".tmp", delete=False) as handle:
        handle.write(payload)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(handle.name, target)
