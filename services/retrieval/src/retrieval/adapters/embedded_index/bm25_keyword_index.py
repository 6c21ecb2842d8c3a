"""An in-process BM25 keyword index (bm25s, Lucene's variant), persisted to disk.

Each namespace is an immutable ``Snapshot`` replaced whole on every write, so queries never
see half a write. Its BM25 model is built on the first query after the write: a bulk
ingestion writes many times before it queries (bm25s, and scipy with it, load then). A
namespace is saved as one ``<namespace>.json`` holding the ids, the analysed terms (nothing
is analysed again at load) and the metadata, written to a temporary file and renamed into
place: after a crash a namespace is either the old or the new version.

An index on disk holds its directory (``DirectoryLock``) until ``close``, as
``EmbeddedVectorIndex`` does.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from retrieval.adapters.data_directory.disk_usage import directory_bytes
from retrieval.adapters.data_directory.durable_files import write_atomically
from retrieval.adapters.data_directory.lock import DirectoryLock, hold_and_load
from retrieval.domain.collection_health import Footprint
from retrieval.domain.filters import Expression, parse_delete_selector, parse_filter
from retrieval.domain.keyword_terms import ANALYSIS, terms
from retrieval.domain.keywords import KeywordMatch, KeywordRecord
from retrieval.domain.metadata import Metadata
from retrieval.domain.metadata_columns import MetadataColumns
from retrieval.domain.models import check_slug
from retrieval.errors import BackendError, InvalidRequestError
from retrieval.ports.vector_index import MetadataFilter, id_pages

if TYPE_CHECKING:
    import bm25s

SUFFIX = ".json"
INLINE_SEARCH_RECORDS = 10_000
"""A namespace up to this size, its BM25 model built, is searched on the event loop: 40 µs
over 2,000 records and 60 µs over 10,000 (the bundled knowledge base repeated), less than a
worker thread's round trip costs (a query took 160 µs through one over 2,000 records, 75 µs
without); a larger one, or one whose model a search would build, in a worker thread."""
Row = tuple[str, Metadata]
"""A record's terms (joined by spaces: a term never holds one) and metadata."""


class Snapshot:
    """One namespace at one moment: records in id order, and BM25 over them once asked."""

    def __init__(self, rows: Mapping[str, Row], *, k1: float, b: float) -> None:
        self.ids = tuple(sorted(rows))
        self.terms = tuple(rows[record_id][0] for record_id in self.ids)
        self.metadata = tuple(rows[record_id][1] for record_id in self.ids)
        self.columns = MetadataColumns(self.metadata)
        self._k1, self._b = k1, b
        self._model: bm25s.BM25 | None = None
        self._model_built = threading.Lock()

    @property
    def size(self) -> int:
        return len(self.ids)

    @property
    def searches_at_once(self) -> bool:
        """Whether a search is short: a small namespace whose model is built."""
        return self._model is not None and self.size <= INLINE_SEARCH_RECORDS

    @property
    def score_bytes(self) -> int:
        """Bytes of the BM25 score matrix once a query has built it, else 0."""
        model = self._model
        if model is None:
            return 0
        return sum(array.nbytes for array in model.scores.values() if isinstance(array, np.ndarray))

    def rows(self) -> dict[str, Row]:
        return dict(zip(self.ids, zip(self.terms, self.metadata, strict=True), strict=True))

    def search(
        self, query: list[str], expression: Expression | None, top_k: int
    ) -> list[KeywordMatch]:
        """The best ``top_k`` records allowed by ``expression``, with their BM25 scores."""
        model = self._bm25()
        if model is None:
            return []
        scores = relevance(model, query)
        if expression is not None:
            scores = np.where(self.columns.mask(expression), scores, 0)
        found = np.flatnonzero(scores > 0)
        found_scores = scores[found]
        if found.size > top_k:
            kept = found_scores >= np.partition(found_scores, found.size - top_k)[-top_k]
            found, found_scores = found[kept], found_scores[kept]
        # Rows are in id order, so the row number breaks ties by id.
        best = np.lexsort((found, -found_scores))[:top_k]
        new = tuple.__new__  # a third of the cost of KeywordMatch._make
        return [
            new(KeywordMatch, pair)
            for pair in zip(
                map(self.ids.__getitem__, found[best].tolist()),
                found_scores[best].tolist(),
                strict=True,
            )
        ]

    def _bm25(self) -> bm25s.BM25 | None:
        with self._model_built:
            if self._model is None and any(self.terms):
                vocabulary: dict[str, int] = {}
                corpus = [
                    [vocabulary.setdefault(term, len(vocabulary)) for term in text.split()]
                    for text in self.terms
                ]
                import bm25s

                self._model = bm25s.BM25(k1=self._k1, b=self._b, method="lucene")
                self._model.index((corpus, vocabulary), show_progress=False)
            return self._model


def relevance(model: bm25s.BM25, query: list[str]) -> npt.NDArray[np.float64]:
    """Every record's BM25 score for ``query``: the model's precomputed term scores (a sparse
    matrix, one column a term), summed in one ``bincount``; ``model.get_scores`` sums them a
    term at a time with ``np.add.at``, at twice the cost. A term repeated counts again."""
    vocabulary, matrix = model.vocab_dict, model.scores
    indptr, indices, data = matrix["indptr"], matrix["indices"], matrix["data"]
    columns = [
        slice(indptr[term], indptr[term + 1])
        for term in map(vocabulary.get, query)
        if term is not None
    ]
    if not columns:
        return np.zeros(matrix["num_docs"])
    return np.bincount(
        np.concatenate([indices[column] for column in columns]),
        weights=np.concatenate([data[column] for column in columns]),
        minlength=matrix["num_docs"],
    )


class Bm25KeywordIndex:
    """BM25 keyword search with metadata filters; ``path=None`` keeps it in memory only.

    ``k1`` and ``b`` are BM25's term-frequency saturation and length normalisation; they
    apply at query time, so an index on disk can be reopened with others.
    """

    def __init__(self, path: Path | None = None, *, k1: float = 1.5, b: float = 0.75) -> None:
        self._path = path
        self._k1, self._b = k1, b
        self._namespaces: dict[str, Snapshot] = {}
        self._write_lock = asyncio.Lock()
        self._writing = threading.Lock()
        self._closed = False
        self._directory: DirectoryLock | None = None
        if path is not None:
            self._directory = hold_and_load(path, self._load)

    async def close(self) -> None:
        """Let a write in progress finish, then release the directory; later calls raise."""
        async with self._write_lock:
            await asyncio.to_thread(self._close)

    def _close(self) -> None:
        with self._writing:
            self._closed = True
            if self._directory is not None:
                self._directory.release()

    def _check_open(self) -> None:
        if self._closed:
            where = f"at {self._path}" if self._path is not None else "in memory"
            raise BackendError(f"the keyword index {where} is closed")

    async def upsert(self, records: Sequence[KeywordRecord], namespace: str) -> int:
        check_slug(namespace, "namespace")
        if not records:
            return 0

        def put(rows: dict[str, Row]) -> bool:
            for record in records:
                rows[record.id] = (" ".join(terms(record.text)), dict(record.metadata))
            return True

        await self._write(namespace, put)
        return len(records)

    async def query(
        self,
        text: str,
        *,
        top_k: int,
        namespace: str,
        filter: MetadataFilter | None = None,
    ) -> list[KeywordMatch]:
        self._check_open()
        expression = parse_filter(filter)
        if top_k < 1:
            raise InvalidRequestError("top_k must be at least 1", field="top_k")
        snapshot = self._namespaces.get(namespace)
        query = terms(text)
        if snapshot is None or not query:
            return []
        if snapshot.searches_at_once:
            return snapshot.search(query, expression, top_k)
        return await asyncio.to_thread(snapshot.search, query, expression, top_k)

    async def delete(
        self, *, namespace: str, ids: Sequence[str] | None = None, delete_all: bool = False
    ) -> None:
        parse_delete_selector(ids, None, delete_all)

        def remove(rows: dict[str, Row]) -> bool:
            doomed = list(rows) if delete_all else {i for i in ids or () if i in rows}
            for record_id in doomed:
                del rows[record_id]
            return bool(doomed)

        await self._write(namespace, remove)

    async def _write(self, namespace: str, change: Callable[[dict[str, Row]], bool]) -> None:
        async with self._write_lock:
            self._check_open()
            await asyncio.to_thread(self._apply, namespace, change)

    def _apply(self, namespace: str, change: Callable[[dict[str, Row]], bool]) -> None:
        """Change the namespace's rows, save them, then let queries see them: whole and in
        order, even when the caller has stopped waiting (a cancelled call)."""
        with self._writing:
            self._check_open()
            old = self._namespaces.get(namespace)
            rows = old.rows() if old is not None else {}
            if not change(rows):
                return
            snapshot = Snapshot(rows, k1=self._k1, b=self._b) if rows else None
            if self._path is not None:
                self._save(self._path / f"{namespace}{SUFFIX}", snapshot)
            if snapshot is None:
                self._namespaces.pop(namespace, None)
            else:
                self._namespaces[namespace] = snapshot

    async def list_ids(
        self, namespace: str, *, prefix: str | None = None
    ) -> AsyncIterator[list[str]]:
        self._check_open()
        snapshot = self._namespaces.get(namespace)
        if snapshot is None:
            return
        for page in id_pages(snapshot.ids, prefix):
            yield page

    async def count(self, namespace: str) -> int:
        self._check_open()
        snapshot = self._namespaces.get(namespace)
        return snapshot.size if snapshot is not None else 0

    async def footprint(self) -> Footprint:
        """Its directory on disk (None when kept in memory only) and, in memory, the BM25
        score matrices built so far; the terms and metadata held as Python objects are not
        counted."""
        disk = None if self._path is None else await asyncio.to_thread(directory_bytes, self._path)
        memory = sum(snapshot.score_bytes for snapshot in list(self._namespaces.values()))
        return Footprint(store="keyword index (bm25)", disk_bytes=disk, memory_bytes=memory)

    @staticmethod
    def _save(target: Path, snapshot: Snapshot | None) -> None:
        if snapshot is None:
            target.unlink(missing_ok=True)
            return
        stored = {
            "analysis": ANALYSIS,
            "ids": snapshot.ids,
            "terms": snapshot.terms,
            "metadata": snapshot.metadata,
        }
        write_atomically(target, json.dumps(stored, ensure_ascii=False).encode())

    def _load(self, path: Path) -> None:
        for leftover in path.glob("*.tmp"):
            leftover.unlink()
        for stored in sorted(path.glob(f"*{SUFFIX}")):
            saved = json.loads(stored.read_bytes())
            if saved["analysis"] != ANALYSIS:
                raise ValueError(
                    f"{stored} holds terms of another analysis ({saved['analysis']}, not "
                    f"{ANALYSIS}): index its texts again into an empty directory"
                )
            rows = dict(
                zip(saved["ids"], zip(saved["terms"], saved["metadata"], strict=True), strict=True)
            )
            self._namespaces[stored.name.removesuffix(SUFFIX)] = Snapshot(
                rows, k1=self._k1, b=self._b
            )
