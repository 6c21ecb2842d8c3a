"""A namespace moved by backup and restore from the embedded stack (embedded vector index,
BM25, MongoDB) to Pinecone and MongoDB and back, compared at each end by the audit.

``Route`` moves any namespace: filled on the embedded stack and backed up (``start``),
restored on Pinecone and MongoDB, backed up there and restored on a fresh embedded stack
(``carry``), each end observed as the caller asks. Each stack has a data directory of its
own, with its embedded MongoDB server (SecantusDB, MongoDB's wire protocol); the Pinecone leg
runs on the given indexes (the test kit's stand-ins). Not one server's URI for all three:
through a URI the stores ask for a page's ids (500 documents') in one ``$in``, which that
server answers in time quadratic in their number, and at 10,000 chunks a find took more than
its 10 s.

``round_trip`` moves estate notes with ``HashEmbedder`` vectors, so the vectors move as they
are. At each end the namespace must be audit-clean and hold the same documents with the same
chunk ids in every store, the same graph records and the same dense scores for
``QUESTIONS`` (which of two chunks tied for a place comes first is the backend's). The BEIR
leg (``beir_round_trip.BeirLeg``) moves a BEIR corpus and scores its judged queries at each
end.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from retrieval.container import Container
from retrieval.domain.models import RetrievalOptions
from retrieval.lifecycle import Application, resolve
from retrieval.service.ingestion.consistency import audit
from retrieval_bench.restore import CHUNKS_PER_DOCUMENT, DIMENSION, bench_stack
from retrieval_testkit.estate_notes import QUESTIONS, estate_notes
from retrieval_testkit.pinecone_standin import PineconeStandIn

NAMESPACE = "garden"
DENSE = RetrievalOptions(mode="dense")
Fill = Callable[[Application], Awaitable[object]]
"""Writes the namespace on the first stack."""
T = TypeVar("T")
Observe = Callable[[Application, Container], Awaitable[T]]
"""What is found at one end."""


@dataclass(frozen=True)
class NamespaceState:
    """What the audit and a search find in a namespace."""

    clean: bool
    """The audit's verdict: every committed chunk in every store, and nothing else."""
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
        """Audit-clean, and the same at every end."""
        return identical(self.states)

    def as_dict(self) -> dict:
        return {
            "documents": self.documents,
            "chunks": self.chunks,
            "identical": self.identical,
            "audit_clean": {end: state.clean for end, state in self.states.items()},
            "seconds": self.seconds,
        }


def identical(states: Mapping[str, NamespaceState]) -> bool:
    first, *others = states.values()
    return first.clean and all(state == first for state in others)


async def namespace_state(
    app: Application, container: Container, namespace: str, questions: Sequence[str]
) -> NamespaceState:
    """The namespace's audit, and the dense scores of the first five for each of
    ``questions``."""
    stores = await resolve(container.chunk_stores)
    found = await audit(stores, await resolve(container.document_ledger), namespace)
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
        for q in questions
    ]
    return NamespaceState(
        clean=found.is_consistent,
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


@dataclass(frozen=True)
class Route:
    """Where a namespace travels: stacks on data directories under ``workdir``, the middle
    one on the ``pinecone`` indexes. Their vectors are ``HashEmbedder``'s, or the configured
    model's when not ``hash_vectors``."""

    workdir: Path
    pinecone: Mapping[str, str]
    hash_vectors: bool = True

    def stack(
        self, name: str, **settings: object
    ) -> AbstractAsyncContextManager[tuple[Application, Container]]:
        return bench_stack(self.workdir / name, hash_vectors=self.hash_vectors, **settings)

    async def start(
        self, namespace: str, fill: Fill, observe: Observe[T], seconds: dict[str, float]
    ) -> tuple[Path, T]:
        """``namespace`` filled on the embedded stack and backed up; the file and what
        ``observe`` finds there."""
        there = self.workdir / "there.backup"
        async with self.stack("embedded") as (app, container):
            with timing(seconds, "ingest"):
                await fill(app)
            with timing(seconds, "backup_embedded"):
                await app.backups.backup(namespace, there)
            return there, await observe(app, container)

    async def carry(
        self, file: Path, observe: Observe[T], seconds: dict[str, float]
    ) -> dict[str, T]:
        """``file`` restored on Pinecone and MongoDB, backed up there and restored on a fresh
        embedded stack; what ``observe`` finds at each of the two ends."""
        back = self.workdir / "back.backup"
        ends: dict[str, T] = {}
        async with self.stack("pinecone", **self.pinecone) as (app, container):
            with timing(seconds, "restore_pinecone"):
                report = await app.backups.restore(file)
            if report.embedded_again or report.failed:
                raise RuntimeError(f"the restore on Pinecone went wrong: {report}")
            ends["pinecone"] = await observe(app, container)
            with timing(seconds, "backup_pinecone"):
                await app.backups.backup(report.namespace, back)
        async with self.stack("embedded-again") as (app, container):
            with timing(seconds, "restore_embedded"):
                await app.backups.restore(back)
            ends["embedded_again"] = await observe(app, container)
        return ends


async def round_trip(chunks: int, route: Route) -> RoundTrip:
    """At least ``chunks`` chunks of estate notes ingested on the embedded stack, backed up,
    restored on Pinecone and MongoDB, backed up there and restored on the embedded stack
    again, along ``route``."""
    documents = estate_notes(max(1, -(-chunks // CHUNKS_PER_DOCUMENT)))
    seconds: dict[str, float] = {}

    async def observe(app: Application, container: Container) -> NamespaceState:
        return await namespace_state(app, container, NAMESPACE, QUESTIONS)

    async def fill(app: Application) -> None:
        await app.ingestion.ingest(documents, NAMESPACE)

    file, first = await route.start(NAMESPACE, fill, observe, seconds)
    states = {"embedded": first, **await route.carry(file, observe, seconds)}
    return RoundTrip(len(documents), len(first.stores["texts"]), states, seconds)
