"""A namespace moved by backup and restore from the embedded stack (embedded vector index,
BM25, MongoDB) to Pinecone and MongoDB and back, compared at each end by the audit.

The three stacks share one MongoDB server (a database each) and take their vectors from
``HashEmbedder``, so the vectors move as they are; the Pinecone leg runs on the given
indexes (the test kit's stand-ins). At each end the namespace must be audit-clean and hold
the same documents with the same chunk ids in every store, the same graph records and the
same dense scores for ``QUESTIONS`` (which of two chunks tied for a place comes first is the
backend's).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import AbstractAsyncContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path

from retrieval.container import Container
from retrieval.domain.models import RetrievalOptions
from retrieval.lifecycle import Application, resolve
from retrieval.service.ingestion.consistency import audit
from retrieval_bench.restore import CHUNKS_PER_DOCUMENT, DIMENSION, bench_stack
from retrieval_testkit.estate_notes import QUESTIONS, estate_notes
from retrieval_testkit.pinecone_standin import PineconeStandIn

NAMESPACE = "garden"
DENSE = RetrievalOptions(mode="dense")


@dataclass(frozen=True)
class NamespaceState:
    """What the audit and a search find in a namespace."""

    records: dict[str, tuple[str, ...]]
    """Each committed document's chunk ids."""
    stores: dict[str, frozenset[str]]
    """The chunk ids each store holds."""
    graph: dict[str, object]
    """Each chunk's graph record, as data."""
    scores: list[list[float]]
    """The dense scores of each question's first five."""


@dataclass(frozen=True)
class RoundTrip:
    documents: int
    chunks: int
    states: dict[str, NamespaceState]
    """The namespace on the embedded stack, on Pinecone and MongoDB, and back."""
    seconds: dict[str, float]

    @property
    def identical(self) -> bool:
        first, *others = self.states.values()
        return all(state == first for state in others)

    def as_dict(self) -> dict:
        return {
            "documents": self.documents,
            "chunks": self.chunks,
            "identical": self.identical,
            "seconds": self.seconds,
        }


async def namespace_state(app: Application, container: Container, namespace: str) -> NamespaceState:
    """Raises when the namespace is not audit-clean."""
    stores = await resolve(container.chunk_stores)
    found = await audit(stores, await resolve(container.document_ledger), namespace)
    if not found.is_consistent:
        raise RuntimeError(f"namespace {namespace!r} is not audit-clean")
    assert found.graph is not None
    assert stores.graph is not None
    records = {
        document_id: tuple(record.chunk_ids) for document_id, record in found.records.items()
    }
    graph = await stores.graph.store.get_many(sorted(found.graph), namespace)
    scores = [
        [
            round(m.score, 5)
            for m in (
                await app.retrieval.retrieve(q, namespace=namespace, top_k=5, options=DENSE)
            ).matches
        ]
        for q in QUESTIONS
    ]
    return NamespaceState(
        records=records,
        stores={
            "vectors": frozenset(found.vectors),
            "keywords": frozenset(found.keywords),
            "texts": frozenset(found.texts),
            "graph": frozenset(found.graph),
        },
        graph={chunk: record.model_dump() for chunk, record in graph.items()},
        scores=scores,
    )


@contextmanager
def pinecone_standins() -> Iterator[dict[str, str]]:
    """The settings of a stack on a dense and a sparse Pinecone stand-in, running."""
    with (
        PineconeStandIn(dimension=DIMENSION) as dense,
        PineconeStandIn(vector_type="sparse", api_key=dense.api_key) as sparse,
    ):
        yield {
            "index_backend": "pinecone",
            "pinecone_api_key": dense.api_key,
            "pinecone_index_host": dense.url,
            "pinecone_sparse_index_host": sparse.url,
            "pinecone_control_host": dense.url,
        }


@contextmanager
def timing(seconds: dict[str, float], name: str) -> Iterator[None]:
    started = time.perf_counter()
    yield
    seconds[name] = time.perf_counter() - started


def stack(
    workdir: Path, mongo_uri: str, **settings: object
) -> AbstractAsyncContextManager[tuple[Application, Container]]:
    """A stack on a data directory and a MongoDB database of its own."""
    database = f"t{uuid.uuid4().hex[:12]}"
    return bench_stack(workdir, mongodb_uri=mongo_uri, mongodb_database=database, **settings)


async def round_trip(
    chunks: int, workdir: Path, mongo_uri: str, pinecone: Mapping[str, str]
) -> RoundTrip:
    """``chunks`` chunks ingested on the embedded stack, backed up, restored on Pinecone (the
    ``pinecone`` settings) and MongoDB, backed up there and restored on the embedded stack
    again, each stack's MongoDB a database of ``mongo_uri``."""
    documents = estate_notes(max(1, chunks // CHUNKS_PER_DOCUMENT))
    there, back = workdir / "there.backup", workdir / "back.backup"
    states: dict[str, NamespaceState] = {}
    seconds: dict[str, float] = {}
    async with stack(workdir / "embedded", mongo_uri) as (app, container):
        with timing(seconds, "ingest"):
            await app.ingestion.ingest(documents, NAMESPACE)
        with timing(seconds, "backup_embedded"):
            await app.backups.backup(NAMESPACE, there)
        states["embedded"] = await namespace_state(app, container, NAMESPACE)
    async with stack(workdir / "pinecone", mongo_uri, **pinecone) as (app, container):
        with timing(seconds, "restore_pinecone"):
            report = await app.backups.restore(there)
        if report.embedded_again or report.failed:
            raise RuntimeError(f"the restore on Pinecone went wrong: {report}")
        states["pinecone"] = await namespace_state(app, container, NAMESPACE)
        with timing(seconds, "backup_pinecone"):
            await app.backups.backup(NAMESPACE, back)
    async with stack(workdir / "embedded-again", mongo_uri) as (app, container):
        with timing(seconds, "restore_embedded"):
            await app.backups.restore(back)
        states["embedded_again"] = await namespace_state(app, container, NAMESPACE)
    return RoundTrip(len(documents), len(states["embedded"].stores["texts"]), states, seconds)
