"""Validation requests and reports as ``retrieval.v1`` messages and back."""

from __future__ import annotations

from typing import Any

from retrieval.domain.models import check_slug, validated
from retrieval.domain.validation import ValidationCase, ValidationRequest
from retrieval.domain.validation_report import (
    QueryOutcome,
    ScoreStatistics,
    TypeFigures,
    ValidationReport,
)
from retrieval.grpc.proto_values import plain_fields, present, set_present
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb


def case_to_proto(case: ValidationCase) -> pb.ValidationCase:
    message = pb.ValidationCase(
        query=case.query,
        expected_document_ids=case.expected_document_ids,
        expected_keywords=case.expected_keywords,
        query_type=case.query_type.value,
        domains=case.domains,
    )
    set_present(message, {"id": case.id, "min_score": case.min_score})
    return message


def case_fields(case: pb.ValidationCase) -> dict[str, Any]:
    return {
        "query": case.query,
        "expected_document_ids": tuple(case.expected_document_ids),
        "expected_keywords": tuple(case.expected_keywords),
        "domains": tuple(case.domains),
        **present(case, ("id", "min_score", "query_type")),
    }


def validate_request(request: ValidationRequest) -> pb.ValidateRequest:
    message = pb.ValidateRequest(
        namespace=request.namespace,
        cases=[case_to_proto(case) for case in request.cases],
        expected_metadata=request.expected_metadata,
        top_k=request.top_k,
    )
    set_present(message, {"success_criterion": request.success_criterion})
    return message


def validation_request_from_proto(request: pb.ValidateRequest) -> ValidationRequest:
    """The request as a model; a bad case names its field (``cases.0.query_type``)."""
    return validated(
        ValidationRequest,
        namespace=check_slug(request.namespace, "namespace"),
        cases=tuple(case_fields(case) for case in request.cases),
        expected_metadata=tuple(request.expected_metadata),
        **present(request, ("success_criterion", "top_k")),
    )


def validation_report_to_proto(report: ValidationReport) -> pb.ValidateResponse:
    return pb.ValidateResponse(**report.model_dump())


def validation_report_from_proto(response: pb.ValidateResponse) -> ValidationReport:
    return ValidationReport(
        **plain_fields(response, ValidationReport),
        failed_queries=tuple(
            QueryOutcome(**plain_fields(failed, QueryOutcome)) for failed in response.failed_queries
        ),
        by_query_type={
            name: TypeFigures(**plain_fields(figures, TypeFigures))
            for name, figures in sorted(response.by_query_type.items())
        },
        top_score=ScoreStatistics(**plain_fields(response.top_score, ScoreStatistics)),
    )
