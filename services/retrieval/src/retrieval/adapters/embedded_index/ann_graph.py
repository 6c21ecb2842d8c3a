"""The approximate (HNSW) search of a large namespace: faiss ``IndexHNSWFlat``, inner product
on unit vectors, so its scores are cosine similarities.

Slot ``n`` of the graph holds row ``n`` of the namespace (rows are appended in the order the
graph takes them in). HNSW cannot remove a vector: deleted and overwritten rows stay in the
graph and are left out of every search by a bitmap of the rows allowed (faiss
``IDSelectorBitmap``), until a compaction builds a new graph of the live rows.

faiss is not safe to search while it adds: a lock keeps the two apart. Additions come in
chunks of ``ADD_CHUNK`` rows, so a search waits for one chunk at most.

faiss loads with the first graph: a namespace below the threshold of approximate search
never needs it.
"""

from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import numpy as np
import numpy.typing as npt
import structlog

from retrieval.adapters.data_directory.durable_files import write_temporary

if TYPE_CHECKING:
    import faiss

Matrix = npt.NDArray[np.float32]
Rows = npt.NDArray[np.int64]

NEIGHBOURS = 16
"""HNSW's M: links per vector and layer (twice that on the bottom layer)."""
EF_CONSTRUCTION = 80
"""Candidates kept while inserting: build time against graph quality (docs/index.md)."""
EF_SEARCH = 512
"""Candidates kept while searching, at least; raised with top_k and for a filter."""
MAX_EF_SEARCH = 4096
ADD_CHUNK = 64
"""Rows added at a time to a graph being searched: how long a search may wait."""

log = structlog.get_logger(__name__)


def allowed_bitmap(allowed: npt.NDArray[np.bool_]) -> npt.NDArray[np.uint8]:
    """The bitmap ``IDSelectorBitmap`` reads: bit ``n % 8`` of byte ``n // 8`` for slot n."""
    return np.packbits(allowed, bitorder="little")


def ef_for(top_k: int, share: float) -> int:
    """Candidates to keep when only ``share`` of the slots may be returned: a filter hides
    candidates from the search, so it keeps more, by share^(-1/4) (1.8 times at 10 %, 2.1 at
    5 %), which held recall@10 at a million records near the unfiltered one (docs/index.md)."""
    return min(MAX_EF_SEARCH, math.ceil(max(EF_SEARCH, 2 * top_k) / share**0.25))


class HnswAnnGraph:
    def __init__(self, index: faiss.IndexHNSWFlat) -> None:
        self._index = index
        self._lock = threading.Lock()

    @classmethod
    def empty(cls, dimension: int) -> HnswAnnGraph:
        import faiss

        index = faiss.IndexHNSWFlat(dimension, NEIGHBOURS, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = EF_CONSTRUCTION
        return cls(index)

    @classmethod
    def build(cls, vectors: Matrix) -> HnswAnnGraph:
        """A graph of ``vectors``: slot n holds row n."""
        graph = cls.empty(vectors.shape[1])
        graph.add(vectors)
        return graph

    @classmethod
    def read(cls, path: Path, rows: Matrix) -> HnswAnnGraph | None:
        """The graph saved at ``path`` if its slots hold the first rows of ``rows``, bit for
        bit; None when there is none or it belongs to other rows (a crash between saving a
        graph and the snapshot it goes with), so the caller builds one again."""
        if not path.exists():
            return None
        import faiss

        try:
            index = faiss.read_index(str(path))
        except RuntimeError as exc:
            log.warning("index_graph_unreadable", path=str(path), error=str(exc))
            return None
        graph = cls(index) if isinstance(index, faiss.IndexHNSWFlat) else None
        if graph is None or not graph._holds(rows):
            log.warning("index_graph_stale", path=str(path))
            return None
        return graph

    def _holds(self, rows: Matrix) -> bool:
        import faiss

        index = self._index
        if index.d != rows.shape[1] or index.ntotal > rows.shape[0]:
            return False
        if index.metric_type != faiss.METRIC_INNER_PRODUCT:
            return False
        if index.ntotal == 0:
            return True
        storage = faiss.downcast_index(index.storage)
        stored = faiss.rev_swig_ptr(storage.get_xb(), index.ntotal * index.d)
        return bool(np.array_equal(stored.reshape(index.ntotal, index.d), rows[: index.ntotal]))

    @property
    def size(self) -> int:
        """Slots: the rows the graph holds, the first ``size`` of the namespace."""
        return int(self._index.ntotal)

    @property
    def nbytes(self) -> int:
        """Memory of the graph: its own copy of the vectors and its links."""
        index = self._index
        hnsw = index.hnsw
        links = hnsw.neighbors.size() * 4 + hnsw.offsets.size() * 8 + hnsw.levels.size() * 4
        return int(index.ntotal * index.d * 4 + links)

    def add(self, vectors: Matrix) -> None:
        """Append ``vectors`` as the next slots (call from a worker thread)."""
        with self._lock:
            self._index.add(np.ascontiguousarray(vectors, dtype=np.float32))

    def search(self, query: Matrix, top_k: int, allowed: npt.NDArray[np.uint8], ef: int) -> Rows:
        """Up to ``top_k`` slots nearest ``query`` among those ``allowed`` marks (a bitmap of
        ``allowed_bitmap``; slots past its end are left out), best first."""
        import faiss

        selector = faiss.IDSelectorBitmap(allowed.shape[0], faiss.swig_ptr(allowed))
        parameters = faiss.SearchParametersHNSW(sel=selector, efSearch=ef)
        with self._lock:
            _, found = self._index.search(query.reshape(1, -1), top_k, params=parameters)
        slots = found[0]
        return slots[slots >= 0].astype(np.int64)

    def write(self, path: Path) -> Path:
        """Save to a synced temporary file beside ``path``; the caller renames it over."""
        import faiss

        def save(file: BinaryIO) -> None:
            with self._lock:
                faiss.write_index(self._index, faiss.PyCallbackIOWriter(file.write))

        return write_temporary(path.parent, save)
