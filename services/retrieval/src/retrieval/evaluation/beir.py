"""A BEIR benchmark through the production read path.

The corpus goes into a namespace of its own as ONE record per document, as BEIR
evaluates (text = title + " " + text): chunk texts into the chunk repository, then
vectors into the index, in large batches and in that order, as ``IngestionService``
writes. Ingestion's chunking is bypassed on purpose: BEIR judges whole documents, and a
precomputed embeddings file holds one vector per document, which the ingestion service
has no way to accept. Before such a file is used, a random sample of its rows is
re-embedded with the configured model and must match (cosine >= 0.999).

Every judged query then goes through ``RetrievalService.retrieve`` (query embedding,
unfiltered search, chunk fetch) and the run is scored with nDCG@10 and Recall@100 as
pytrec_eval scores it. The namespace is removed at the end, whatever happens.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable, Sequence

import numpy as np
from pydantic import Field

from retrieval.container import Application
from retrieval.domain.models import MAX_TOP_K, Frozen, RagDocument
from retrieval.errors import EmbeddingModelMismatchError
from retrieval.evaluation.beir_data import BeirDataset, BeirDocument
from retrieval.evaluation.metrics import latency_percentiles, mean_over_queries, ndcg_at, recall_at
from retrieval.ports.embedder import Matrix
from retrieval.service.ingestion_service import IngestionService, PassageEmbedder

MIN_COSINE = 0.999
MIN_CHECKED = 16
EMBED_BATCH = 64
WRITE_BATCH = 2000
STAGES = ("embed", "search", "fetch", "total")
Progress = Callable[[str, int, int], None]
"""Called with a stage ("check", "embed", "write" or "ask"), items done and the stage's total."""


class EmbeddingCheck(Frozen):
    """How a precomputed embeddings file compared with the configured model."""

    documents: tuple[str, ...] = Field(description="Ids of the re-embedded documents.")
    min_cosine: float = Field(description="Lowest cosine between file row and fresh vector.")


class BeirReport(Frozen):
    name: str
    model: str = Field(description="The embedding model that answered the queries.")
    documents: int
    queries: int = Field(description="Judged queries asked.")
    top_k: int
    embeddings: str = Field(description="'file' (checked) or 'embedded' by this run.")
    check: EmbeddingCheck | None
    ndcg_at_10: float
    recall_at_100: float
    write_ms: float = Field(description="Writing chunk texts and vectors.")
    latency_ms: dict[str, dict[str, float]] = Field(description="p50/p95/max of each stage.")
    run: dict[str, dict[str, float]] = Field(
        exclude=True, description="Scores by query and document, as pytrec_eval takes a run."
    )


def advance(progress: Progress | None, stage: str, done: int, total: int) -> None:
    if progress is not None:
        progress(stage, done, total)


async def check_embeddings(
    embedder: PassageEmbedder,
    corpus: Sequence[BeirDocument],
    vectors: Matrix,
    sample: int,
    rng: random.Random,
    progress: Progress | None = None,
) -> EmbeddingCheck:
    """Re-embed ``sample`` random documents (at least 16) and compare with their file rows."""
    if vectors.shape != (len(corpus), embedder.dimension):
        raise EmbeddingModelMismatchError(
            f"embeddings of shape {vectors.shape} for {len(corpus)} documents and a model of "
            f"dimension {embedder.dimension}"
        )
    rows = sorted(rng.sample(range(len(corpus)), min(len(corpus), max(sample, MIN_CHECKED))))
    sampled = [corpus[row] for row in rows]
    fresh = np.concatenate(
        [
            await embed_batch(embedder, sampled, start, len(rows), progress)
            for start in range(0, len(rows), EMBED_BATCH)
        ]
    )
    stored = vectors[rows]
    cosines = np.sum(fresh * stored, axis=1) / (
        np.linalg.norm(fresh, axis=1) * np.linalg.norm(stored, axis=1)
    )
    worst = int(np.argmin(cosines))
    if cosines[worst] < MIN_COSINE:
        raise EmbeddingModelMismatchError(
            f"the embeddings file does not match {embedder.model}: document "
            f"{corpus[rows[worst]].doc_id} has cosine {cosines[worst]:.4f} < {MIN_COSINE} to its "
            "fresh embedding; re-create the file or pass --embed-all"
        )
    return EmbeddingCheck(
        documents=tuple(corpus[row].doc_id for row in rows), min_cosine=float(cosines[worst])
    )


async def embed_batch(
    embedder: PassageEmbedder,
    documents: Sequence[BeirDocument],
    start: int,
    total: int,
    progress: Progress | None,
    stage: str = "check",
) -> Matrix:
    batch = documents[start : start + EMBED_BATCH]
    vectors = await embedder.embed_passages([document.passage for document in batch])
    advance(progress, stage, start + len(batch), total)
    return vectors


async def embed_corpus(
    embedder: PassageEmbedder, corpus: Sequence[BeirDocument], progress: Progress | None = None
) -> Matrix:
    """One passage vector per document, in corpus order."""
    batches = [
        await embed_batch(embedder, corpus, start, len(corpus), progress, stage="embed")
        for start in range(0, len(corpus), EMBED_BATCH)
    ]
    return np.concatenate(batches) if batches else np.zeros((0, embedder.dimension), np.float32)


def as_document(document: BeirDocument, domain: str) -> RagDocument:
    """The whole passage as one document, stored as one chunk (as its vector was made)."""
    return RagDocument(
        document_id=document.doc_id,
        title=document.title or document.doc_id,
        domain=domain,
        content=document.passage,
    )


async def write_corpus(
    ingestion: IngestionService,
    corpus: Sequence[BeirDocument],
    vectors: Matrix,
    namespace: str,
    domain: str,
    progress: Progress | None = None,
    batch_size: int = WRITE_BATCH,
) -> None:
    """One chunk per document, ``batch_size`` documents at a time."""
    for start in range(0, len(corpus), batch_size):
        batch = [as_document(doc, domain) for doc in corpus[start : start + batch_size]]
        await ingestion.ingest_embedded(batch, vectors[start : start + len(batch)], namespace)
        advance(progress, "write", start + len(batch), len(corpus))


async def run_beir(
    app: Application,
    dataset: BeirDataset,
    *,
    name: str,
    embeddings: Matrix | None,
    rng: random.Random,
    check_sample: int = MIN_CHECKED,
    top_k: int = MAX_TOP_K,
    progress: Progress | None = None,
) -> BeirReport:
    """Index the corpus (from ``embeddings`` once checked, or embedded now), ask every judged
    query, score the run, and remove the namespace."""
    check = None
    if embeddings is None:
        vectors = await embed_corpus(app.ingestion, dataset.corpus, progress)
    else:
        check = await check_embeddings(
            app.ingestion, dataset.corpus, embeddings, check_sample, rng, progress
        )
        vectors = embeddings
    queries = dataset.judged_queries
    qrels = {qid: dataset.qrels[qid] for qid in queries}
    namespace = f"beir-{name}-{uuid.uuid4().hex[:8]}"
    run: dict[str, dict[str, float]] = {}
    timings = []
    try:
        started = time.perf_counter()
        domain = app.settings.allowed_domains[0]
        await write_corpus(app.ingestion, dataset.corpus, vectors, namespace, domain, progress)
        write_ms = (time.perf_counter() - started) * 1e3
        for qid, text in queries.items():
            result = await app.retrieval.retrieve(text, (), top_k, 0.0, namespace)
            run[qid] = {match.document_id: match.score for match in result.matches}
            timings.append(result.timings)
            advance(progress, "ask", len(run), len(queries))
    finally:
        await app.ingestion.delete_namespace(namespace)
    return BeirReport(
        name=name,
        model=app.ingestion.model,
        documents=len(dataset.corpus),
        queries=len(queries),
        top_k=top_k,
        embeddings="embedded" if embeddings is None else "file",
        check=check,
        ndcg_at_10=mean_over_queries(
            run, qrels, lambda ranking, judged: ndcg_at(ranking, judged, 10)
        ),
        recall_at_100=mean_over_queries(
            run, qrels, lambda ranking, judged: recall_at(ranking, judged, 100)
        ),
        write_ms=write_ms,
        latency_ms={
            stage: latency_percentiles([getattr(t, f"{stage}_ms") for t in timings])
            for stage in STAGES
        },
        run=run,
    )
