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
from retrieval.grpc.proto_values import optional_field, present, set_present
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
    return pb.ValidateResponse(
        namespace=report.namespace,
        source=report.source.value,
        passed=report.passed,
        success_criterion=report.success_criterion,
        top_k=report.top_k,
        total_queries=report.total_queries,
        passed_queries=report.passed_queries,
        success_rate=report.success_rate,
        failed_queries=[
            pb.FailedQuery(
                id=outcome.id,
                query=outcome.query,
                query_type=outcome.query_type.value,
                reasons=outcome.reasons,
                top_score=outcome.top_score,
            )
            for outcome in report.failed_queries
        ],
        by_query_type={
            name: pb.QueryTypeFigures(**figures.model_dump())
            for name, figures in report.by_query_type.items()
        },
        top_score=pb.ScoreStatistics(**report.top_score.model_dump()),
        vector_count=report.vector_count,
        chunk_count=report.chunk_count,
        metadata_completeness=report.metadata_completeness,
        expected_metadata=report.expected_metadata,
        metadata_field_completeness=report.metadata_field_completeness,
        problems=report.problems,
    )


def validation_report_from_proto(response: pb.ValidateResponse) -> ValidationReport:
    top = response.top_score
    return ValidationReport(
        namespace=response.namespace,
        source=response.source,
        passed=response.passed,
        success_criterion=response.success_criterion,
        top_k=response.top_k,
        total_queries=response.total_queries,
        passed_queries=response.passed_queries,
        success_rate=response.success_rate,
        failed_queries=tuple(
            QueryOutcome(
                id=failed.id,
                query=failed.query,
                query_type=failed.query_type,
                reasons=tuple(failed.reasons),
                top_score=optional_field(failed, "top_score"),
            )
            for failed in response.failed_queries
        ),
        by_query_type={
            name: TypeFigures(
                total=figures.total, passed=figures.passed, success_rate=figures.success_rate
            )
            for name, figures in sorted(response.by_query_type.items())
        },
        top_score=ScoreStatistics(
            count=top.count,
            **{name: optional_field(top, name) for name in ("mean", "median", "min", "max")},
        ),
        vector_count=response.vector_count,
        chunk_count=response.chunk_count,
        metadata_completeness=optional_field(response, "metadata_completeness"),
        expected_metadata=tuple(response.expected_metadata),
        metadata_field_completeness=dict(response.metadata_field_completeness),
        problems=tuple(response.problems),
    )
