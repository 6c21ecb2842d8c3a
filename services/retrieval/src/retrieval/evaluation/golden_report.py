"""What a golden run measured, graded from the results: a row per sample, figures per group,
the report.

Retrieval runs without a confidence threshold so that the threshold report sees every cosine;
the sample's threshold is then applied to the result exactly as the service applies it (to
the cosine similarity, ``scores['dense']``, which every match of a dense or hybrid retrieval
carries).

Matches are chunks and judgements are documents: a document ranks where its best chunk
ranks and scores what that chunk scores; its later chunks are skipped. Ranking metrics
(recall, precision, MRR, nDCG) are averaged over the samples that have relevant
documents; hit@5 covers every sample, a negative counting as a hit when nothing scores
at or above its threshold. Each answer's citations are graded against the sample's labels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import Field

from retrieval.domain.answers import Answer
from retrieval.domain.context import build_context
from retrieval.domain.models import (
    DENSE,
    Frozen,
    RetrievalMatch,
    RetrievalOptions,
    RetrievalResult,
    meets_threshold,
)
from retrieval.evaluation.ablation import VariantFigures, latency
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
from retrieval.evaluation.percentiles import summary

HIT_K = 5
NDCG_K = 10
ALL_DOMAINS = "all"


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
