"""Backup and restore throughput against the raw stores'.

On the embedded stack (a data directory of its own with its MongoDB, ``HashEmbedder``
vectors: a restore that keeps its vectors embeds nothing), a namespace of about ``chunks``
chunks (``estate_notes``, three a document) is ingested and backed up, then ``rounds`` times
in turn, each into a namespace of its own:

- raw: the file's chunk texts, vectors, keyword entries and graph records handed to the
  stores directly, ``RAW_GROUP`` chunks a call: what the stores accept, with no ledger, lease
  or extraction;
- restore: ``Backups.restore`` of the file (checked whole, written through the writer);
- backup: ``Backups.backup`` of the first namespace.

Throughputs are chunks a second over the medians of the rounds; each figure's ratio is its
throughput over raw's. Every restored namespace must come out audit-clean with the source's
chunks.
"""

from __future__ import annotations

import statistics
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from pathlib import Path

import numpy as np
import numpy.typing as npt
from dependency_injector import providers

from retrieval.adapters.backup_file.gzip_json_lines import GzipJsonLinesBackupArchive
from retrieval.batching import slices
from retrieval.container import Container
from retrieval.domain.backup import BackedUpDocument, BackupHeader
from retrieval.domain.chunk_identity import keyword_record, vector_record
from retrieval.domain.graph import GraphRecord
from retrieval.domain.models import RagChunk
from retrieval.lifecycle import Application, resolve, running
from retrieval.service.backup.backups import CHUNKS_PER_GROUP
from retrieval.service.ingestion.consistency import ChunkStores, audit
from retrieval.settings import Settings
from retrieval_testkit import HashEmbedder
from retrieval_testkit.estate_notes import estate_notes

DIMENSION = 384
"""That of the bundled model's vectors."""
CHUNKS_PER_DOCUMENT = 3
RAW_GROUP = CHUNKS_PER_GROUP
"""Chunks a raw write hands each store at once: as many as a restore's group write."""
SOURCE = "bench-source"
RawRow = tuple[RagChunk, npt.NDArray[np.float32], GraphRecord]


@asynccontextmanager
async def bench_stack(
    data_dir: Path, *, hash_vectors: bool = True, **settings: object
) -> AsyncIterator[tuple[Application, Container]]:
    """The application on ``data_dir`` (with ``settings``), its vectors ``HashEmbedder``'s, or
    the configured model's when not ``hash_vectors``."""
    configured = Settings(_env_file=None, data_dir=data_dir, log_level="ERROR", **settings)
    container = Container(settings=configured)
    if hash_vectors:
        container.override_providers(model_embedder=providers.Object(HashEmbedder(DIMENSION)))
    async with running(configured, container) as app:
        yield app, container


async def timed(work: Awaitable[object]) -> float:
    started = time.perf_counter()
    await work
    return time.perf_counter() - started


def raw_rows(file: Path, namespace: str, graph_version: str) -> list[RawRow]:
    """Each chunk of the file, moved to ``namespace``, with its vector and graph record."""
    entries = GzipJsonLinesBackupArchive().entries(file)
    header = next(entries)
    assert isinstance(header, BackupHeader)
    rows: list[RawRow] = []
    for document in entries:
        assert isinstance(document, BackedUpDocument)
        chunks = [c.model_copy(update={"namespace": namespace}) for c in document.chunks]
        vectors = document.matrix(header.dimension)
        graph = document.graph(chunks, graph_version)
        assert vectors is not None
        assert graph is not None
        rows += zip(chunks, vectors, graph, strict=True)
    return rows


async def write_raw(stores: ChunkStores, rows: list[RawRow], namespace: str) -> None:
    """``rows`` straight into the stores, ``RAW_GROUP`` at a time: texts, vectors, keyword
    entries, graph records."""
    assert stores.graph is not None
    for group in slices(rows, RAW_GROUP):
        chunks = [chunk for chunk, _, _ in group]
        await stores.texts.upsert_many(chunks)
        await stores.index.upsert([vector_record(c, v) for c, v, _ in group], namespace)
        await stores.keywords.upsert([keyword_record(c) for c in chunks], namespace)
        await stores.graph.store.upsert([record for _, _, record in group], namespace)


async def stored_chunks(container: Container, namespace: str) -> set[str]:
    """The chunk texts ``namespace`` holds; raises if it is not audit-clean."""
    stores = await resolve(container.chunk_stores)
    found = await audit(stores, await resolve(container.document_ledger), namespace)
    if not found.is_consistent:
        raise RuntimeError(f"namespace {namespace!r} is not audit-clean")
    return set(found.texts)


async def measure_restore(chunks: int, rounds: int) -> dict:
    documents = estate_notes(max(1, chunks // CHUNKS_PER_DOCUMENT))
    seconds: dict[str, list[float]] = {"raw": [], "restore": [], "backup": []}
    with tempfile.TemporaryDirectory(prefix="retrieval-bench-restore-") as workdir:
        file = Path(workdir) / "source.backup"
        async with bench_stack(Path(workdir) / "data") as (app, container):
            await app.ingestion.ingest(documents, SOURCE)
            source = await stored_chunks(container, SOURCE)
            stores = await resolve(container.chunk_stores)
            assert stores.graph is not None
            for _ in range(rounds):
                raw, restored = f"raw-{uuid.uuid4().hex[:8]}", f"restored-{uuid.uuid4().hex[:8]}"
                seconds["backup"].append(await timed(app.backups.backup(SOURCE, file)))
                rows = raw_rows(file, raw, stores.graph.version)
                seconds["raw"].append(await timed(write_raw(stores, rows, raw)))
                seconds["restore"].append(await timed(app.backups.restore(file, restored)))
                if await stored_chunks(container, restored) != source:
                    raise RuntimeError(f"the restore into {restored!r} lacks chunks of its source")
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    per_s = {name: len(source) / s for name, s in medians.items()}
    return {
        "documents": len(documents),
        "chunks": len(source),
        "rounds": rounds,
        "chunks_per_s": per_s,
        "backup_to_raw_ratio": per_s["backup"] / per_s["raw"],
        "restore_to_raw_ratio": per_s["restore"] / per_s["raw"],
        "seconds": seconds,
    }
