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

With a chat model configured, ``AnswerService.answer`` then answers every sample that has
relevant documents (the default's request again), one sample at a time: a local model
server answers one request at a time anyway, and a rate-limited API is not flooded. Each
answer's citations are graded against the sample's labels; a sample the model fails on is
recorded as failed and the run goes on. Without a model these figures are None and no
model is called.

The namespace is removed (vectors, then chunk texts) when the run ends, failed or not.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping, Sequence

import structlog
from pydantic import Field

from retrieval.benchmarks.stats import summary
from retrieval.domain.answers import Answer
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
from retrieval.errors import IngestionError, RetrievalError
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
    citation_precision,
    first_relevant_rank,
    group_by,
    hit_at,
    mean,
    ndcg_at,
    precision_at,
    recall_at,
    reciprocal_rank,
    threshold_report,
)
from retrieval.service.answers.answer_service import AnswerService
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.ingestion.library_service import Library
from retrieval.service.ingestion.outcomes import DocumentOutcome, Outcome
from retrieval.service.retrieval.retrieval_service import RetrievalService

HIT_K = 5
ONLY_DEFAULT = {DEFAULT_VARIANT: RetrievalOptions()}
NDCG_K = 10
ALL_DOMAINS = "all"
Progress = Callable[[str, int, int], None]
"""Called with a stage name ("seed", "ask" or "answer"), the items done so far and the
stage's total."""

log = structlog.get_logger("retrieval")


def golden_namespace(suite: str) -> str:
    """A namespace no other run uses: ``golden-<suite>-<8 random hex digits>``."""
    return f"golden-{suite[:100]}-{uuid.uuid4().hex[:8]}"


class ReturnedDocument(Frozen):
    document_id: str = Field(description="A document the query returned.")
    domain: str = Field(description="Its knowledge domain.")
    score: float = Field(description="Ranking score of its best chunk.")
    cosine: float | None = Field(description="Cosine similarity of that chunk to the query.")


class SampleAnswer(Frozen):
    """What the model answered to one sample, and how its citations grade."""

    answered: bool = Field(
        description="The model answered; false when it failed or retrieval found no context."
    )
    cited_documents: tuple[str, ...] = Field(
        default=(),
        description="Document of each passage the answer cites, in order of first citation.",
    )
    unknown_citations: tuple[int, ...] = Field(
        default=(), description="Numbers the answer cites that the context does not have."
    )
    citation_precision: float | None = Field(
        default=None,
        description="Share of the cited passages from relevant documents; None unanswered.",
    )
    error: str | None = Field(default=None, description="Why the model failed; None if it did not.")

    @classmethod
    def of(cls, answer: Answer, qrels: Mapping[str, int]) -> SampleAnswer:
        cited = tuple(citation.document_id for citation in answer.citations)
        return cls(
            answered=answer.answered,
            cited_documents=cited,
            unknown_citations=answer.unknown_citations,
            citation_precision=citation_precision(cited, qrels) if answer.answered else None,
        )


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
    answer: SampleAnswer | None = Field(
        default=None, description="The model's answer; None for a negative or without a model."
    )


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
    answered: int | None = Field(
        default=None,
        description="Samples with relevant documents the model answered; None (as every "
        "answer figure) when no model is configured.",
    )
    answer_failures: int | None = Field(
        default=None, description="Samples the model failed on (errors in their rows)."
    )
    citation_precision: float | None = Field(
        default=None,
        description="Of the passages an answer cites, the share from relevant documents (0 "
        "for an answer citing none); mean over the answered samples.",
    )
    answered_with_citations: float | None = Field(
        default=None,
        description="Share of the answered samples whose answer cites at least one passage.",
    )
    unknown_citation_rate: float | None = Field(
        default=None,
        description="Of the numbers the answers cite, the share the context does not have; "
        "None when no answer cites any.",
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
    library: Library,
    *,
    namespace: str,
    answers: AnswerService | None,
    top_k: int = 10,
    variants: Mapping[str, RetrievalOptions] = ONLY_DEFAULT,
    context_tokens: int = 3000,
    progress: Progress | None = None,
) -> GoldenReport:
    """Seed ``suite`` into ``namespace``, answer every sample under each variant (the
    report's figures are the default's), have ``answers`` answer the samples with relevant
    documents (None when no model is configured: no answer figures, no model call), remove
    the namespace, report."""
    requests = [
        RetrievalQuery(query=s.query, domains=s.domains, top_k=top_k, namespace=namespace)
        for s in suite.samples
    ]
    try:
        started = time.perf_counter()
        chunks = await seed(ingestion, suite, namespace, progress)
        seed_ms = (time.perf_counter() - started) * 1e3
        results = await ask_every_variant(
            retrieval,
            requests,
            variants,
            None if progress is None else lambda done, total: progress("ask", done, total),
        )
        given = {} if answers is None else await answer_samples(answers, suite, requests, progress)
    finally:
        await library.delete_namespace(namespace)
    graded = {
        name: [
            grade(sample, best_per_document(result.matches), result.timings.total_ms)
            for sample, result in zip(suite.samples, variant_results, strict=True)
        ]
        for name, variant_results in results.items()
    }
    default_rows = [
        row.model_copy(update={"answer": given.get(row.id)}) for row in graded[DEFAULT_VARIANT]
    ]
    report = summarise(suite, namespace, top_k, chunks, seed_ms, default_rows)
    ablation = {
        name: variant_figures(variants[name], rows, results[name]) for name, rows in graded.items()
    }
    precision, recall = context_figures(suite, results[DEFAULT_VARIANT], context_tokens)
    return report.model_copy(
        update={
            "ablation": ablation,
            "context_precision": precision,
            "context_recall": recall,
            **({} if answers is None else answer_figures(list(given.values()))),
        }
    )


async def answer_samples(
    answers: AnswerService,
    suite: GoldenSuite,
    requests: Sequence[RetrievalQuery],
    progress: Progress | None,
) -> dict[str, SampleAnswer]:
    """The answer to each sample with relevant documents, by sample id, one at a time; a
    sample the model fails on gets an unanswered row naming the error."""
    asked = [
        (sample, request)
        for sample, request in zip(suite.samples, requests, strict=True)
        if not sample.is_negative
    ]
    given: dict[str, SampleAnswer] = {}
    for done, (sample, request) in enumerate(asked, start=1):
        try:
            given[sample.id] = SampleAnswer.of(await answers.answer(request), sample.relevant)
        except RetrievalError as error:
            log.warning("golden.answer_failed", sample=sample.id, error=str(error))
            given[sample.id] = SampleAnswer(answered=False, error=str(error))
        if progress is not None:
            progress("answer", done, len(asked))
    return given


def answer_figures(given: Sequence[SampleAnswer]) -> dict[str, float | int | None]:
    """The report's answer figures (its field names) from the samples' answers."""
    answered = [answer for answer in given if answer.answered]
    unknown = sum(len(answer.unknown_citations) for answer in answered)
    cited = unknown + sum(len(answer.cited_documents) for answer in answered)
    return {
        "answered": len(answered),
        "answer_failures": sum(1 for answer in given if answer.error is not None),
        "citation_precision": mean(answer.citation_precision or 0.0 for answer in answered),
        "answered_with_citations": mean(float(bool(a.cited_documents)) for a in answered),
        "unknown_citation_rate": unknown / cited if cited else None,
    }


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
    latency = summary([row.latency_ms for row in rows])
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
