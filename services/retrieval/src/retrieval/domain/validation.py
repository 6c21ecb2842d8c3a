"""Validation of a namespace as it is served: its cases and what a validation asks.

Pure: ``retrieval.service.validation_service`` asks the questions; this module reads case
files and derives the smoke set from a namespace's documents, ``validation_grading`` grades
each answer and ``validation_report`` sums them up.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from enum import StrEnum
from typing import Annotated

from pydantic import Field, StringConstraints, ValidationError

from retrieval.domain.models import (
    MAX_QUERY_CHARS,
    MAX_TOP_K,
    DomainName,
    Frozen,
    Namespace,
    invalid_request,
)
from retrieval.errors import InvalidRequestError

SMOKE_DOCUMENTS = 200
"""Most documents the smoke set asks about: those whose ids have the lowest BLAKE2b digests,
a sample spread over the whole namespace that keeps a document in it for as long as it lives."""
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
