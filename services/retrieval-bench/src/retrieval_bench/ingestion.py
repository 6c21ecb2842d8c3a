"""Ingestion throughput against the raw embedder, and the cost of re-ingesting.

The corpus is the bundled knowledge base, ``copies`` times over; every title carries a
run-unique tag, so nothing of the first ingest is in the embedding cache. Measured in one
run, on the same texts: the raw embedder alone (the ceiling), a first ingest (chunk, embed,
write), the same corpus again (unchanged), then every document with changed metadata (which
must cost no model time), then every document renamed (new ids, same texts).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable

from retrieval.adapters.files.document_files import load_documents
from retrieval.demo import KNOWLEDGE_DIR
from retrieval.domain.models import RagDocument
from retrieval.ports import Embedder
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.ingestion.library_service import Library
from retrieval.service.ingestion.outcomes import DocumentOutcome, Outcome


def corpus(copies: int, tag: str) -> list[RagDocument]:
    return [
        document.model_copy(
            update={
                "document_id": f"{document.document_id}-{copy}",
                "title": f"{document.title} ({tag}-{copy})",
            }
        )
        for copy in range(copies)
        for document in load_documents([KNOWLEDGE_DIR])
    ]


async def timed(work: Callable[[], Awaitable[object]]) -> float:
    started = time.perf_counter()
    await work()
    return time.perf_counter() - started


async def measure_ingestion(
    ingestion: IngestionService, library: Library, raw: Embedder, copies: int, namespace: str
) -> dict:
    tag = uuid.uuid4().hex[:8]
    documents = corpus(copies, tag)
    texts = [
        chunk.content for document in documents for chunk in ingestion.split(document, namespace)
    ]
    outcomes: dict[str, list[DocumentOutcome]] = {}

    async def ingest(name: str, batch: list[RagDocument]) -> None:
        outcomes[name] = await ingestion.ingest(batch, namespace)

    try:
        raw_s = await timed(lambda: raw.embed_passages(texts))
        first_s = await timed(lambda: ingest("first", documents))
        unchanged_s = await timed(lambda: ingest("unchanged", documents))
        relabelled = [
            d.model_copy(update={"metadata": {**d.metadata, "edition": "2"}}) for d in documents
        ]
        relabelled_s = await timed(lambda: ingest("relabelled", relabelled))
        renamed = [
            d.model_copy(update={"document_id": f"{d.document_id}-moved"}) for d in relabelled
        ]
        renamed_s = await timed(lambda: ingest("renamed", renamed))
    finally:
        await library.delete_namespace(namespace)
    failed = [o for batch in outcomes.values() for o in batch if o.outcome is Outcome.FAILED]
    if failed:
        raise RuntimeError(f"{failed[0].document_id}: {failed[0].error}")
    chunks = len(texts)
    return {
        "documents": len(documents),
        "chunks": chunks,
        "raw_embedder_chunks_per_s": chunks / raw_s,
        "ingest_documents_per_s": len(documents) / first_s,
        "ingest_chunks_per_s": chunks / first_s,
        "ingest_to_raw_ratio": raw_s / first_s,
        "seconds": {
            "raw_embedder": raw_s,
            "first_ingest": first_s,
            "unchanged": unchanged_s,
            "metadata_changed": relabelled_s,
            "renamed": renamed_s,
        },
        "outcomes": {
            name: {kind.value: sum(o.outcome is kind for o in batch) for kind in Outcome}
            for name, batch in outcomes.items()
        },
    }
