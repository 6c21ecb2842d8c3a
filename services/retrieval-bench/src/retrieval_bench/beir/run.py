"""A BEIR benchmark through the production read path.

The corpus goes into a namespace of its own as ONE record per document, as BEIR
evaluates (text = title + " " + text): chunk texts into the chunk repository, then
vectors into the index, in large batches and in that order, as ``IngestionService``
writes. Ingestion's chunking is bypassed on purpose: BEIR judges whole documents, and a
precomputed embeddings file holds one vector per document, which the ingestion service
has no way to accept. Before such a file is used, a random sample of its rows is
re-embedded with the configured model and must match (cosine >= 0.999).

Every judged query then goes through ``RetrievalService.retrieve_query`` under each
ablation variant (``retrieval.evaluation.ablation``: the default settings, then one stage
switched at a time) and each run is scored with nDCG@10 and Recall@100 as pytrec_eval
scores it, and with both@5 and both@10 (every relevant document in the first k), overall and
for the queries of each type. The namespace is removed at the end, whatever happens.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable, Sequence

import numpy as np
from pydantic import Field

from retrieval.domain.models import (
    MAX_TOP_K,
    Frozen,
    RagDocument,
    RetrievalOptions,
    RetrievalQuery,
    RetrievalResult,
    StageTimings,
)
from retrieval.errors import EmbeddingModelMismatchError
from retrieval.evaluation.ablation import (
    DEFAULT_VARIANT,
    VARIANTS,
    VariantFigures,
    ask_every_variant,
    latency,
)
from retrieval.evaluation.metrics import Run, hit_at, mean_over_queries, reciprocal_rank
from retrieval.evaluation.percentiles import summary
from retrieval.lifecycle import Application
from retrieval.ports.embedder import Matrix
from retrieval.service.ingestion.ingestion_service import IngestionService, PassageEmbedder
from retrieval_bench.beir.data import BeirDataset, BeirDocument
from retrieval_bench.beir.figures import RankingFigures, figures_by_type, ranking_figures

MIN_COSINE = 0.999
MIN_CHECKED = 16
EMBED_BATCH = 64
WRITE_BATCH = 2000
CORPUS_DOMAIN = "benchmark"
"""The domain of a benchmark corpus's documents when every domain is allowed."""
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
    ndcg_at_10: float = Field(description="With the default settings.")
    recall_at_100: float
    both_at_5: float = Field(description="Share of queries with every relevant document in 5.")
    both_at_10: float
    by_type: dict[str, RankingFigures] = Field(
        description="The default settings' figures on the queries of each type (metadata.type)."
    )
    write_ms: float = Field(description="Writing chunk texts, vectors and keyword entries.")
    latency_ms: dict[str, dict[str, float]] = Field(
        description="p50/p95/max of each stage with the default settings, and in total."
    )
    ablation: dict[str, VariantFigures] = Field(description="Figures of every variant.")
    run: dict[str, dict[str, float]] = Field(
        exclude=True,
        description="Default settings' scores by query and document, as pytrec_eval takes a run.",
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


def corpus_domain(allowed_domains: Sequence[str]) -> str:
    """The domain a benchmark corpus is written under: the first of a set allow-list."""
    return allowed_domains[0] if allowed_domains else CORPUS_DOMAIN


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
    variants: dict[str, RetrievalOptions] = VARIANTS,
    progress: Progress | None = None,
) -> BeirReport:
    """Index the corpus (from ``embeddings`` once checked, or embedded now), ask every judged
    query under every variant, score the runs, and remove the namespace."""
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
    requests = [
        RetrievalQuery(query=text, top_k=top_k, namespace=namespace) for text in queries.values()
    ]
    try:
        started = time.perf_counter()
        domain = corpus_domain(app.settings.allowed_domains)
        await write_corpus(app.ingestion, dataset.corpus, vectors, namespace, domain, progress)
        write_ms = (time.perf_counter() - started) * 1e3
        answers = await ask_every_variant(
            app.retrieval,
            requests,
            variants,
            lambda done, total: advance(progress, "ask", done, total),
        )
    finally:
        await app.library.delete_namespace(namespace)
    runs = {name: as_run(queries, results) for name, results in answers.items()}
    ablation = {
        name: variant_figures(variants[name], runs[name], qrels, answers[name]) for name in answers
    }
    overall = ranking_figures(runs[DEFAULT_VARIANT], qrels)
    return BeirReport(
        name=name,
        model=app.ingestion.model,
        documents=len(dataset.corpus),
        queries=len(queries),
        top_k=top_k,
        embeddings="embedded" if embeddings is None else "file",
        check=check,
        ndcg_at_10=overall.ndcg_at_10,
        recall_at_100=overall.recall_at_100,
        both_at_5=overall.both_at_5,
        both_at_10=overall.both_at_10,
        by_type=figures_by_type(runs[DEFAULT_VARIANT], qrels, dataset.types),
        write_ms=write_ms,
        latency_ms=stage_latencies([result.timings for result in answers[DEFAULT_VARIANT]]),
        ablation=ablation,
        run=runs[DEFAULT_VARIANT],
    )


def stage_latencies(timings: Sequence[StageTimings]) -> dict[str, dict[str, float]]:
    """p50/p95/max of each stage that ran (0 for a call it did not run in), and of the whole
    call under ``total``."""
    stages = dict.fromkeys(stage for t in timings for stage in t.stages)
    return {
        **{stage: summary([t.stages.get(stage, 0.0) for t in timings]) for stage in stages},
        "total": summary([t.total_ms for t in timings]),
    }


def as_run(queries: dict[str, str], results: list[RetrievalResult]) -> Run:
    """Documents by score per query; one chunk per document, so a match is its document."""
    return {
        qid: {match.document_id: match.score for match in result.matches}
        for qid, result in zip(queries, results, strict=True)
    }


def variant_figures(
    options: RetrievalOptions,
    run: Run,
    qrels: dict[str, dict[str, int]],
    results: list[RetrievalResult],
) -> VariantFigures:
    ranking = ranking_figures(run, qrels)
    spread = latency(results)
    return VariantFigures(
        options=options.model_dump(mode="json", exclude_none=True),
        ndcg_at_10=ranking.ndcg_at_10,
        recall_at_100=ranking.recall_at_100,
        hit_at_5=mean_over_queries(run, qrels, lambda r, q: hit_at(r, q, 5)),
        both_at_10=ranking.both_at_10,
        mrr=mean_over_queries(run, qrels, reciprocal_rank),
        p50_ms=spread["p50"],
        p95_ms=spread["p95"],
    )
