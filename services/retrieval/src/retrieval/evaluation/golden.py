"""The golden run: seed a suite into a namespace of its own, ask every sample, grade the answers.

The production code paths all the way: ``IngestionService.ingest`` chunks and embeds the
seed documents with the configured embedder, ``RetrievalService.retrieve`` answers each
sample with its domain filter. Retrieval runs without a confidence threshold so that the
threshold report sees every cosine; the sample's threshold is then applied to the result
exactly as the service applies it (to the cosine similarity, ``scores['dense']``, which
every match of a dense or hybrid retrieval carries).

Matches are chunks and judgements are documents: a document ranks where its best chunk
ranks and scores what that chunk scores; its later chunks are skipped. Ranking metrics
(recall, precision, MRR, nDCG) are averaged over the samples that have relevant
documents; hit@5 covers every sample, a negative counting as a hit when nothing scores
at or above its threshold.

The namespace is removed (vectors, then chunk texts) when the run ends, failed or not.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping, Sequence

from pydantic import Field

from retrieval.domain.context import build_context
from retrieval.domain.models import (
    DENSE,
    Frozen,
    RetrievalMatch,
    RetrievalOptions,
    RetrievalQuery,
    RetrievalResult,
    meets_threshold,
)
from retrieval.errors import IngestionError
from retrieval.evaluation.ablation import (
    DEFAULT_VARIANT,
    VariantFigures,
    ask_every_variant,
    latency,
)
from retrieval.evaluation.golden_suite import GoldenSample, GoldenSuite
from retrieval.evaluation.metrics import (
    ScoredMatch,
    ThresholdFigures,
    first_relevant_rank,
    group_by,
    hit_at,
    latency_percentiles,
    mean,
    ndcg_at,
    precision_at,
    recall_at,
    reciprocal_rank,
    threshold_report,
)
from retrieval.service.ingestion_service import DocumentOutcome, IngestionService, Outcome
from retrieval.service.retrieval_service import RetrievalService

HIT_K = 5
ONLY_DEFAULT = {DEFAULT_VARIANT: RetrievalOptions()}
NDCG_K = 10
ALL_DOMAINS = "all"
Progress = Callable[[str, int, int], None]
"""Called with a stage name ("seed" or "ask"), the items done so far and the stage's total."""


def golden_namespace(suite: str) -> str:
    """A namespace no other run uses: ``golden-<suite>-<8 random hex digits>``."""
    return f"golden-{suite[:100]}-{uuid.uuid4().hex[:8]}"


class ReturnedDocument(Frozen):
    document_id: str = Field(description="A document the query returned.")
    domain: str = Field(description="Its knowledge domain.")
    score: float = Field(description="Ranking score of its best chunk.")
    cosine: float | None = Field(description="Cosine similarity of that chunk to the query.")


class SampleRow(Frozen):
    """How one sample was answered."""

    id: str
    kind: str
    query: str
    domains: tuple[str, ...]
    confidence_threshold: float
    expected: dict[str, int] = Field(description="Graded relevant documents.")
    returned: tuple[ReturnedDocument, ...] = Field(
        description="Documents returned, best first, before the sample's threshold."
    )
    first_relevant_rank: int | None = Field(description="Rank after the threshold, or None.")
    hit_at_5: float
    recall_at_5: float | None
    precision_at_5: float | None
    reciprocal_rank: float | None
    ndcg_at_10: float | None
    latency_ms: float = Field(description="retrieve() wall-clock time as the service timed it.")
    passed: bool = Field(description="Relevant document in the top 5, or a negative left empty.")


class GroupFigures(Frozen):
    """Mean figures of a group of samples; ranking figures are None for negatives only."""

    samples: int
    hit_at_5: float
    recall_at_5: float | None
    precision_at_5: float | None
    mrr: float | None
    ndcg_at_10: float | None

    @classmethod
    def of(cls, rows: Sequence[SampleRow]) -> GroupFigures:
        graded = [row for row in rows if row.expected]
        return cls(
            samples=len(rows),
            hit_at_5=mean(row.hit_at_5 for row in rows) or 0.0,
            recall_at_5=mean(row.recall_at_5 or 0.0 for row in graded),
            precision_at_5=mean(row.precision_at_5 or 0.0 for row in graded),
            mrr=mean(row.reciprocal_rank or 0.0 for row in graded),
            ndcg_at_10=mean(row.ndcg_at_10 or 0.0 for row in graded),
        )


class GoldenReport(Frozen):
    """Everything a golden run measured."""

    suite: str
    namespace: str
    top_k: int = Field(description="Chunks asked for per sample.")
    documents: int
    chunks: int
    seed_ms: float = Field(description="Chunking, embedding and writing the seed documents.")
    samples: int
    negatives: int
    hit_at_5: float = Field(description="Over every sample, negatives included.")
    recall_at_5: float | None
    precision_at_5: float | None
    mrr: float | None
    ndcg_at_10: float | None
    p50_ms: float
    p95_ms: float
    by_domain: dict[str, GroupFigures] = Field(
        description="Samples under the domains of their relevant documents."
    )
    by_kind: dict[str, GroupFigures]
    thresholds: dict[str, ThresholdFigures] = Field(
        description=f"Per domain of the matched document, and under {ALL_DOMAINS!r}."
    )
    rows: tuple[SampleRow, ...]
    ablation: dict[str, VariantFigures] = Field(
        default_factory=dict, description="Figures of every variant asked besides the default."
    )
    context_precision: float | None = Field(
        default=None,
        description="Of the chunks an answer's context would hold (the default's matches "
        "within the context budget), the share from relevant documents; mean over the "
        "samples that have relevant documents.",
    )
    context_recall: float | None = Field(
        default=None,
        description="Of the relevant documents, the share with a chunk in that context.",
    )


def best_per_document(matches: Sequence[RetrievalMatch]) -> list[ReturnedDocument]:
    seen: dict[str, ReturnedDocument] = {}
    for match in matches:
        if match.document_id not in seen:
            seen[match.document_id] = ReturnedDocument(
                document_id=match.document_id,
                domain=match.domain,
                score=match.score,
                cosine=match.scores.get(DENSE),
            )
    return list(seen.values())


def grade(sample: GoldenSample, returned: list[ReturnedDocument], latency_ms: float) -> SampleRow:
    ranking = [
        doc.document_id
        for doc in returned
        if meets_threshold(doc.cosine, sample.confidence_threshold)
    ]
    qrels = sample.relevant
    common = {
        "id": sample.id,
        "kind": sample.kind,
        "query": sample.query,
        "domains": sample.domains,
        "confidence_threshold": sample.confidence_threshold,
        "expected": qrels,
        "returned": tuple(returned),
        "latency_ms": latency_ms,
    }
    if sample.is_negative:
        return SampleRow(
            **common,
            first_relevant_rank=None,
            hit_at_5=float(not ranking),
            recall_at_5=None,
            precision_at_5=None,
            reciprocal_rank=None,
            ndcg_at_10=None,
            passed=not ranking,
        )
    hit = hit_at(ranking, qrels, HIT_K)
    return SampleRow(
        **common,
        first_relevant_rank=first_relevant_rank(ranking, qrels),
        hit_at_5=hit,
        recall_at_5=recall_at(ranking, qrels, HIT_K),
        precision_at_5=precision_at(ranking, qrels, HIT_K),
        reciprocal_rank=reciprocal_rank(ranking, qrels),
        ndcg_at_10=ndcg_at(ranking, qrels, NDCG_K),
        passed=bool(hit),
    )


async def seed(
    ingestion: IngestionService, suite: GoldenSuite, namespace: str, progress: Progress | None
) -> int:
    """Ingest the seed documents; returns the chunk count. Raises if any document failed."""
    done = 0

    def seeded(group: Sequence[DocumentOutcome]) -> None:
        nonlocal done
        done += len(group)
        if progress is not None:
            progress("seed", done, len(suite.documents))

    outcomes = await ingestion.ingest(suite.documents, namespace, on_progress=seeded)
    failed = [outcome for outcome in outcomes if outcome.outcome == Outcome.FAILED]
    if failed:
        raise IngestionError(f"seeding failed for {failed[0].document_id}: {failed[0].error}")
    return sum(outcome.chunks for outcome in outcomes)


async def run_golden(
    suite: GoldenSuite,
    retrieval: RetrievalService,
    ingestion: IngestionService,
    *,
    namespace: str,
    top_k: int = 10,
    variants: Mapping[str, RetrievalOptions] = ONLY_DEFAULT,
    context_tokens: int = 3000,
    progress: Progress | None = None,
) -> GoldenReport:
    """Seed ``suite`` into ``namespace``, answer every sample under each variant (the
    report's figures are the default's), remove the namespace, report."""
    requests = [
        RetrievalQuery(query=s.query, domains=s.domains, top_k=top_k, namespace=namespace)
        for s in suite.samples
    ]
    try:
        started = time.perf_counter()
        chunks = await seed(ingestion, suite, namespace, progress)
        seed_ms = (time.perf_counter() - started) * 1e3
        answers = await ask_every_variant(
            retrieval,
            requests,
            variants,
            None if progress is None else lambda done, total: progress("ask", done, total),
        )
    finally:
        await ingestion.delete_namespace(namespace)
    graded = {
        name: [
            grade(sample, best_per_document(result.matches), result.timings.total_ms)
            for sample, result in zip(suite.samples, results, strict=True)
        ]
        for name, results in answers.items()
    }
    report = summarise(suite, namespace, top_k, chunks, seed_ms, graded[DEFAULT_VARIANT])
    ablation = {
        name: variant_figures(variants[name], rows, answers[name]) for name, rows in graded.items()
    }
    precision, recall = context_figures(suite, answers[DEFAULT_VARIANT], context_tokens)
    return report.model_copy(
        update={"ablation": ablation, "context_precision": precision, "context_recall": recall}
    )


def context_figures(
    suite: GoldenSuite, results: Sequence[RetrievalResult], budget_tokens: int
) -> tuple[float | None, float | None]:
    """Mean context precision and recall over the samples that have relevant documents."""
    precisions, recalls = [], []
    for sample, result in zip(suite.samples, results, strict=True):
        if sample.is_negative:
            continue
        context = build_context(result.matches, budget_tokens=budget_tokens)
        documents = [citation.document_id for citation in context.citations]
        relevant = [document for document in documents if document in sample.relevant]
        precisions.append(len(relevant) / len(documents) if documents else 0.0)
        recalls.append(len(set(relevant)) / len(sample.relevant))
    return mean(precisions), mean(recalls)


def variant_figures(
    options: RetrievalOptions, rows: Sequence[SampleRow], results: Sequence[RetrievalResult]
) -> VariantFigures:
    figures = GroupFigures.of(rows)
    spread = latency(results)
    return VariantFigures(
        options=options.model_dump(mode="json", exclude_none=True),
        ndcg_at_10=figures.ndcg_at_10,
        recall_at_100=None,
        hit_at_5=figures.hit_at_5,
        mrr=figures.mrr,
        p50_ms=spread["p50"],
        p95_ms=spread["p95"],
    )


def summarise(
    suite: GoldenSuite,
    namespace: str,
    top_k: int,
    chunks: int,
    seed_ms: float,
    rows: Sequence[SampleRow],
) -> GoldenReport:
    domains = suite.document_domains
    overall = GroupFigures.of(rows)
    latency = latency_percentiles([row.latency_ms for row in rows])
    matches = [
        ScoredMatch(doc.domain, doc.cosine, doc.document_id in row.expected)
        for row in rows
        for doc in row.returned
        if doc.cosine is not None
    ]
    return GoldenReport(
        suite=suite.name,
        namespace=namespace,
        top_k=top_k,
        documents=len(suite.documents),
        chunks=chunks,
        seed_ms=seed_ms,
        samples=overall.samples,
        negatives=sum(1 for row in rows if not row.expected),
        hit_at_5=overall.hit_at_5,
        recall_at_5=overall.recall_at_5,
        precision_at_5=overall.precision_at_5,
        mrr=overall.mrr,
        ndcg_at_10=overall.ndcg_at_10,
        p50_ms=latency["p50"],
        p95_ms=latency["p95"],
        by_domain={
            name: GroupFigures.of(members)
            for name, members in group_by(
                rows, lambda row: sorted(domains[doc] for doc in row.expected)
            ).items()
        },
        by_kind={
            name: GroupFigures.of(members)
            for name, members in group_by(rows, lambda row: [row.kind]).items()
        },
        thresholds=threshold_report(matches, overall=ALL_DOMAINS),
        rows=tuple(rows),
    )
