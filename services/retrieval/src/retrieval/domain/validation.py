"""Validation of a namespace as it is served: its cases, how each answer is graded, the report.

Pure: ``retrieval.service.validation_service`` asks the questions; this module reads case
files, derives the smoke set from a namespace's documents, grades each result and sums up.

A case passes when every check it asks for passes:

- ``expected_document_ids``: one of them is among the ``top_k`` matches. When the dense
  search answered (dense and hybrid mode), every match carries its cosine similarity
  (``scores['dense']``); an expected document whose matches carry none was found by keyword
  search alone because its chunks have no vectors, and the check fails.
- ``expected_keywords``: at least half of them appear, case-insensitively, in the texts of
  the top ``KEYWORD_MATCHES`` matches.
- ``min_score``: the top match's cosine similarity reaches it. Not its ``score``: a fused or
  BM25 score has no fixed scale and is comparable only within one result.

Every case also needs the retrieval to succeed: no error, and no search degraded.
"""

from __future__ import annotations

import hashlib
import json
import statistics
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated

from pydantic import Field, StringConstraints, ValidationError

from retrieval.domain.models import (
    DENSE,
    MAX_QUERY_CHARS,
    MAX_TOP_K,
    DomainName,
    Frozen,
    Namespace,
    RagChunk,
    RetrievalMatch,
    invalid_request,
)
from retrieval.errors import InvalidRequestError

SMOKE_DOCUMENTS = 200
"""Most documents the smoke set asks about: those whose ids have the lowest BLAKE2b digests,
a sample spread over the whole namespace that keeps a document in it for as long as it lives."""
KEYWORD_MATCHES = 3
"""Expected keywords are looked for in the texts of this many best matches."""
DEFAULT_TOP_K = 5

NonEmpty = Annotated[str, StringConstraints(min_length=1)]


class QueryType(StrEnum):
    """What kind of question a case asks; the report breaks success down by it."""

    FACTUAL = "factual"
    CONCEPTUAL = "conceptual"
    PROCEDURAL = "procedural"
    MULTI_TOPIC = "multi_topic"
    EDGE_CASE = "edge_case"


class CaseSource(StrEnum):
    """Where a validation's questions came from."""

    CASES = "cases"
    SMOKE = "smoke"


class ValidationCase(Frozen):
    """One question to ask a namespace, and what its answer must show."""

    query: str = Field(
        min_length=1, max_length=MAX_QUERY_CHARS, description="The question, as asked."
    )
    id: str | None = Field(
        default=None,
        min_length=1,
        max_length=256,
        description="Names the case in the report; ``case-<position>`` (from 1) when absent.",
    )
    expected_document_ids: tuple[NonEmpty, ...] = Field(
        default=(), description="Passes when at least one of them is among the top_k matches."
    )
    expected_keywords: tuple[NonEmpty, ...] = Field(
        default=(),
        description="Passes when at least half of them appear, case-insensitively, in the "
        "texts of the top 3 matches.",
    )
    min_score: float | None = Field(
        default=None,
        ge=-1,
        le=1,
        description="The top match's cosine similarity to the query (``scores['dense']``) "
        "must reach this.",
    )
    query_type: QueryType = Field(
        default=QueryType.FACTUAL, description="Kind of question, for the breakdown."
    )
    domains: tuple[DomainName, ...] = Field(
        default=(), description="Search only these knowledge domains; empty means all."
    )


class CaseFile(Frozen):
    """A case file: its cases, and the metadata fields every chunk should carry."""

    cases: tuple[ValidationCase, ...] = Field(min_length=1, description="Cases to ask.")
    expected_metadata: tuple[NonEmpty, ...] = Field(
        default=(),
        description="Metadata fields every chunk should carry; empty: every key seen on the "
        "namespace's chunks.",
    )


def parse_case_file(text: str) -> CaseFile:
    """A case file's JSON: a list of cases, or ``{"cases": [...], "expected_metadata": [...]}``.

    Raises ``InvalidRequestError`` naming the line of a syntax error, or the field that fails
    (``cases.2.query``: the third case).
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidRequestError(
            f"not JSON: {error.msg} at line {error.lineno}, column {error.colno}", field="cases"
        ) from error
    if isinstance(data, list):
        data = {"cases": data}
    if not isinstance(data, dict):
        raise InvalidRequestError(
            "must be a list of cases or an object with a 'cases' list", field="cases"
        )
    try:
        return CaseFile.model_validate(data)
    except ValidationError as error:
        raise invalid_request(error) from error


class ValidationRequest(Frozen):
    """What to validate, and how strictly."""

    namespace: Namespace = Field(description="Namespace to validate.")
    cases: tuple[ValidationCase, ...] = Field(
        default=(),
        description="Cases to ask; empty: the smoke set (each document's title must find it).",
    )
    expected_metadata: tuple[NonEmpty, ...] = Field(
        default=(),
        description="Metadata fields every chunk should carry; empty: every key seen on the "
        "namespace's chunks.",
    )
    success_criterion: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Share of queries that must pass; None: the service's setting.",
    )
    top_k: int = Field(
        default=DEFAULT_TOP_K, ge=1, le=MAX_TOP_K, description="Matches asked for per query."
    )


def digest(document_id: str) -> bytes:
    return hashlib.blake2b(document_id.encode(), digest_size=16).digest()


def smoke_cases(
    titles: Mapping[str, str], limit: int = SMOKE_DOCUMENTS
) -> tuple[ValidationCase, ...]:
    """For each of at most ``limit`` documents (by digest of its id), in id order: its title
    as the query, expecting that document."""
    chosen = sorted(sorted(titles, key=digest)[:limit])
    return tuple(
        ValidationCase(id=document, query=titles[document], expected_document_ids=(document,))
        for document in chosen
    )


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


def ranked_documents(matches: Sequence[RetrievalMatch]) -> list[str]:
    """Document ids of the matches, best first, each once."""
    return list(dict.fromkeys(match.document_id for match in matches))


def top_cosine(matches: Sequence[RetrievalMatch]) -> float | None:
    """The top match's cosine similarity to the query, None when there is none."""
    return matches[0].scores.get(DENSE) if matches else None


def missing_documents(
    expected: Sequence[str],
    matches: Sequence[RetrievalMatch],
    top_k: int,
    cosines_expected: bool,
) -> str | None:
    """Why no expected document counts as found, or None; ``cosines_expected`` when the
    dense search answered, so that a match without a cosine similarity has no vector."""
    found = ranked_documents(matches[:top_k])
    hits = [document for document in expected if document in found]
    if not hits:
        noun = "document" if len(expected) == 1 else "documents"
        return (
            f"expected {noun} {', '.join(expected)} not in top {top_k} "
            f"(found {', '.join(found) or 'nothing'})"
        )
    with_cosine = {m.document_id for m in matches[:top_k] if DENSE in m.scores}
    if cosines_expected and not with_cosine.intersection(hits):
        return (
            f"expected document {hits[0]} found by keyword search only: its chunks have no "
            "vectors (no cosine similarity)"
        )
    return None


def missing_keywords(keywords: Sequence[str], matches: Sequence[RetrievalMatch]) -> str | None:
    """Why too few keywords appear in the best matches' texts, or None."""
    text = "\n".join(match.content for match in matches[:KEYWORD_MATCHES]).casefold()
    found = [keyword for keyword in keywords if keyword.casefold() in text]
    if 2 * len(found) >= len(keywords):
        return None
    missing = [keyword for keyword in keywords if keyword not in found]
    return (
        f"{len(found)} of {len(keywords)} keywords in the top {KEYWORD_MATCHES}; "
        f"missing: {', '.join(missing)}"
    )


def low_score(min_score: float | None, matches: Sequence[RetrievalMatch]) -> str | None:
    """Why the top match's cosine similarity falls short of ``min_score``, or None."""
    if min_score is None:
        return None
    if not matches:
        return f"nothing returned (min_score {min_score})"
    top = top_cosine(matches)
    if top is None:
        return f"the top match has no cosine similarity to compare with min_score {min_score}"
    if top < min_score:
        return f"top score {top:.4f} < {min_score}"
    return None


def grade(
    case: ValidationCase,
    matches: Sequence[RetrievalMatch],
    top_k: int,
    *,
    degraded: Sequence[str],
    cosines_expected: bool,
) -> tuple[str, ...]:
    """Why the answer fails the case; empty when it passes. ``degraded`` names the searches
    that failed; ``cosines_expected`` when the dense search answered."""
    reasons = [
        f"degraded: {', '.join(degraded)} failed and the rest answered" if degraded else None,
        missing_documents(case.expected_document_ids, matches, top_k, cosines_expected)
        if case.expected_document_ids
        else None,
        missing_keywords(case.expected_keywords, matches),
        low_score(case.min_score, matches),
    ]
    return tuple(reason for reason in reasons if reason is not None)


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
