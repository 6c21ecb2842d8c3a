"""What a validation found: each case's outcome, the namespace's survey, the report."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

from pydantic import Field

from retrieval.domain.models import Frozen, RagChunk
from retrieval.domain.validation import CaseSource, QueryType, ValidationCase


@dataclass
class NamespaceSurvey:
    """What one reading of a namespace's chunks found: a title per document, and how many
    chunks carry each set of metadata keys."""

    titles: dict[str, str] = field(default_factory=dict)
    key_sets: Counter[frozenset[str]] = field(default_factory=Counter)

    def add(self, chunks: Iterable[RagChunk]) -> None:
        for chunk in chunks:
            self.titles.setdefault(chunk.document_id, chunk.title)
            self.key_sets[frozenset(chunk.metadata)] += 1

    def metadata_completeness(
        self, expected: Collection[str]
    ) -> tuple[float | None, dict[str, float]]:
        """The share of chunks carrying every expected field (``expected``, else every key
        seen), None without chunks; and each field with the share of chunks carrying it."""
        fields = frozenset(expected) or frozenset().union(*self.key_sets)
        total = sum(self.key_sets.values())
        if not total:
            return None, dict.fromkeys(sorted(fields), 0.0)
        complete = sum(count for keys, count in self.key_sets.items() if fields <= keys)
        shares = {
            name: sum(count for keys, count in self.key_sets.items() if name in keys) / total
            for name in sorted(fields)
        }
        return complete / total, shares


class QueryOutcome(Frozen):
    """How one case was answered."""

    id: str = Field(description="The case's id, or ``case-<position>``.")
    query: str = Field(description="The question asked.")
    query_type: QueryType = Field(description="Kind of question.")
    reasons: tuple[str, ...] = Field(description="Why it failed; empty when it passed.")
    top_score: float | None = Field(
        description="Cosine similarity of the top match; None when nothing came back, the "
        "top match has none, or the retrieval failed."
    )

    @property
    def passed(self) -> bool:
        return not self.reasons

    @classmethod
    def of(
        cls, case: ValidationCase, position: int, reasons: Sequence[str], top_score: float | None
    ) -> QueryOutcome:
        return cls(
            id=case.id or f"case-{position + 1}",
            query=case.query,
            query_type=case.query_type,
            reasons=tuple(reasons),
            top_score=top_score,
        )


def success_rate(passed: int, total: int) -> float:
    """``passed / total``; 0 when nothing was asked."""
    return passed / total if total else 0.0


class TypeFigures(Frozen):
    """Success of the queries of one type."""

    total: int = Field(ge=0, description="Queries of this type.")
    passed: int = Field(ge=0, description="Of them, those that passed.")
    success_rate: float = Field(ge=0, le=1, description="passed / total.")

    @classmethod
    def of(cls, outcomes: Sequence[QueryOutcome]) -> TypeFigures:
        passed = sum(outcome.passed for outcome in outcomes)
        return cls(
            total=len(outcomes), passed=passed, success_rate=success_rate(passed, len(outcomes))
        )


class ScoreStatistics(Frozen):
    """The top match's cosine similarity over the queries whose top match has one."""

    count: int = Field(ge=0, description="Queries with a top cosine similarity.")
    mean: float | None = Field(description="Mean; None when count is 0.")
    median: float | None = Field(description="Median; None when count is 0.")
    min: float | None = Field(description="Lowest; None when count is 0.")
    max: float | None = Field(description="Highest; None when count is 0.")

    @classmethod
    def of(cls, scores: Sequence[float]) -> ScoreStatistics:
        if not scores:
            return cls(count=0, mean=None, median=None, min=None, max=None)
        return cls(
            count=len(scores),
            mean=statistics.fmean(scores),
            median=statistics.median(scores),
            min=min(scores),
            max=max(scores),
        )


class ValidationReport(Frozen):
    """How a namespace answered its validation queries."""

    namespace: str = Field(description="Namespace validated.")
    source: CaseSource = Field(description="``cases`` (given) or ``smoke`` (titles).")
    passed: bool = Field(
        description="Some query was asked, success_rate >= the criterion, and the namespace "
        "has no problems."
    )
    success_criterion: float = Field(ge=0, le=1, description="Share that had to pass.")
    top_k: int = Field(ge=1, description="Matches asked for per query.")
    total_queries: int = Field(ge=0, description="Queries asked.")
    passed_queries: int = Field(ge=0, description="Queries that passed.")
    success_rate: float = Field(ge=0, le=1, description="passed_queries / total_queries.")
    failed_queries: tuple[QueryOutcome, ...] = Field(description="Each failed query and why.")
    by_query_type: dict[str, TypeFigures] = Field(description="Success per query type.")
    top_score: ScoreStatistics = Field(
        description="The top match's cosine similarity (``scores['dense']``) over the queries."
    )
    vector_count: int = Field(ge=0, description="Vectors of the namespace in the index.")
    chunk_count: int = Field(ge=0, description="Chunk texts of the namespace.")
    metadata_completeness: float | None = Field(
        ge=0,
        le=1,
        description="Share of the namespace's chunks carrying every expected metadata field; "
        "None without chunks.",
    )
    expected_metadata: tuple[str, ...] = Field(
        description="The fields completeness was measured on: those asked for, else every "
        "key seen on the namespace's chunks."
    )
    metadata_field_completeness: dict[str, float] = Field(
        default_factory=dict,
        description="Each expected field with the share of the namespace's chunks carrying it.",
    )
    problems: tuple[str, ...] = Field(
        default=(),
        description="What is wrong with the namespace whatever its queries find: chunk texts "
        "without vectors, or vectors without texts (``retrieval reconcile`` repairs both).",
    )


def summarise(
    namespace: str,
    source: CaseSource,
    outcomes: Sequence[QueryOutcome],
    *,
    criterion: float,
    top_k: int,
    vector_count: int,
    chunk_count: int,
    completeness: tuple[float | None, dict[str, float]],
) -> ValidationReport:
    passed = sum(outcome.passed for outcome in outcomes)
    rate = success_rate(passed, len(outcomes))
    problems = store_problems(vector_count, chunk_count)
    types = sorted({outcome.query_type for outcome in outcomes})
    return ValidationReport(
        namespace=namespace,
        source=source,
        passed=bool(outcomes) and rate >= criterion and not problems,
        success_criterion=criterion,
        top_k=top_k,
        total_queries=len(outcomes),
        passed_queries=passed,
        success_rate=rate,
        failed_queries=tuple(outcome for outcome in outcomes if not outcome.passed),
        by_query_type={
            kind.value: TypeFigures.of([o for o in outcomes if o.query_type is kind])
            for kind in types
        },
        top_score=ScoreStatistics.of([o.top_score for o in outcomes if o.top_score is not None]),
        vector_count=vector_count,
        chunk_count=chunk_count,
        metadata_completeness=completeness[0],
        expected_metadata=tuple(completeness[1]),
        metadata_field_completeness=completeness[1],
        problems=problems,
    )


def store_problems(vector_count: int, chunk_count: int) -> tuple[str, ...]:
    """A namespace whose texts and vectors do not pair up is broken, however its queries
    fare: some of its chunks cannot be found by meaning, or some matches have no text."""
    if chunk_count > vector_count:
        return (
            f"{chunk_count - vector_count} chunk texts have no vector ({chunk_count} texts, "
            f"{vector_count} vectors): run retrieval reconcile",
        )
    if vector_count > chunk_count:
        return (
            f"{vector_count - chunk_count} vectors have no chunk text ({vector_count} vectors, "
            f"{chunk_count} texts): run retrieval reconcile",
        )
    return ()
