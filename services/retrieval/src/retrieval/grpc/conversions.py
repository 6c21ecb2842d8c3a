"""Protobuf messages of ``retrieval.v1`` to the service's Pydantic models and back.

Metadata travels as ``google.protobuf.Struct``, whose numbers are all doubles: a whole number
of at most 2**53 comes back as an ``int``, any other number as a ``float``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from google.protobuf.struct_pb2 import Struct, Value
from google.protobuf.timestamp_pb2 import Timestamp
from pydantic import ValidationError

from retrieval.domain.answers import Answer, AnswerDelta, AnswerDone, AnswerEvent, ContextResult
from retrieval.domain.context import BuiltContext, Citation
from retrieval.domain.models import (
    EMBED_STAGE,
    FETCH_STAGE,
    SEARCH_STAGE,
    MatchStatistics,
    QueryRewrite,
    RagDocument,
    RetrievalMatch,
    RetrievalOptions,
    RetrievalQuery,
    RetrievalResult,
    StageTimings,
    check_slug,
    invalid_request,
    validated,
)
from retrieval.domain.provenance import Source, check_source
from retrieval.domain.validation import (
    QueryOutcome,
    ScoreStatistics,
    TypeFigures,
    ValidationCase,
    ValidationReport,
    ValidationRequest,
)
from retrieval.errors import InvalidRequestError
from retrieval.service.ingestion.library import DocumentSummary
from retrieval.service.ingestion.outcomes import DeleteReport, DocumentOutcome, Outcome, SyncReport
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb

MAX_EXACT_INTEGER = 2**53
OUTCOMES = {
    Outcome.CREATED: pb.OUTCOME_CREATED,
    Outcome.UPDATED: pb.OUTCOME_UPDATED,
    Outcome.UNCHANGED: pb.OUTCOME_UNCHANGED,
    Outcome.FAILED: pb.OUTCOME_FAILED,
    Outcome.DELETED: pb.OUTCOME_DELETED,
}
OUTCOMES_BY_NUMBER = {number: outcome for outcome, number in OUTCOMES.items()}
MAX_PAGE_SIZE = 1000


def optional_namespace(value: str) -> str | None:
    """The namespace a request names, or None for the service's default."""
    return value or None


def metadata_to_struct(metadata: Mapping[str, Any]) -> Struct:
    struct = Struct()
    struct.update(metadata)
    return struct


def plain(value: Value) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "number_value":
        number = value.number_value
        return int(number) if number.is_integer() and abs(number) <= MAX_EXACT_INTEGER else number
    if kind == "list_value":
        return [plain(item) for item in value.list_value.values]
    if kind == "struct_value":
        return metadata_from_struct(value.struct_value)
    if kind in ("string_value", "bool_value"):
        return getattr(value, kind)
    return None


def metadata_from_struct(struct: Struct) -> dict[str, Any]:
    """Plain values; what metadata may not hold (nulls, objects) is left for validation to name."""
    return {key: plain(value) for key, value in struct.fields.items()}


def timestamp_of(moment: datetime | None) -> Timestamp | None:
    if moment is None:
        return None
    timestamp = Timestamp()
    timestamp.FromDatetime(moment)
    return timestamp


def moment_of(message: Any, name: str, field: str) -> datetime | None:
    """An optional Timestamp field as an aware datetime; InvalidRequestError naming ``field``
    when it lies outside years 1 to 9999 or its nanos outside a second."""
    if not message.HasField(name):
        return None
    try:
        return getattr(message, name).ToDatetime(tzinfo=UTC)
    except ValueError as error:
        raise InvalidRequestError(str(error), field=field) from error


def retrieve_request(
    query: str,
    domains: Sequence[str],
    top_k: int | None,
    confidence_threshold: float | None,
    namespace: str | None,
    options: RetrievalOptions | None = None,
    source_prefix: str | None = None,
    section: str | None = None,
) -> pb.RetrieveRequest:
    request = pb.RetrieveRequest(query=query, domains=domains, namespace=namespace or "")
    set_present(
        request,
        {
            "top_k": top_k,
            "confidence_threshold": confidence_threshold,
            "source_prefix": source_prefix,
            "section": section,
        },
    )
    if options is not None:
        set_present(request.options, options.model_dump(mode="json"), prefix="options.")
    return request


def query_request(query: RetrievalQuery) -> pb.RetrieveRequest:
    return retrieve_request(
        query.query,
        query.domains,
        query.top_k,
        query.confidence_threshold,
        query.namespace,
        query.options,
        query.source_prefix,
        query.section,
    )


def set_present(message: Any, values: Mapping[str, Any], prefix: str = "") -> None:
    """Set the optional fields whose value is not None."""
    for field, value in values.items():
        if value is not None:
            try:
                setattr(message, field, value)
            except (TypeError, ValueError) as error:
                raise InvalidRequestError(str(error), field=prefix + field) from error


def present(message: Any, names: Iterable[str]) -> dict[str, Any]:
    """The optional fields a message carries."""
    return {name: getattr(message, name) for name in names if message.HasField(name)}


def optional_field(message: Any, name: str) -> Any:
    """An optional field's value, or None when the message does not carry it."""
    return getattr(message, name) if message.HasField(name) else None


def query_from_proto(request: pb.RetrieveRequest) -> RetrievalQuery:
    """The request as a query; absent fields keep the model's defaults, an empty namespace
    means the service's default."""
    return validated(
        RetrievalQuery,
        query=request.query,
        domains=tuple(request.domains),
        namespace=optional_namespace(request.namespace),
        options=present(request.options, RetrievalOptions.model_fields),
        **present(request, ("top_k", "confidence_threshold", "source_prefix", "section")),
    )


def result_to_proto(result: RetrievalResult) -> pb.RetrieveResponse:
    timings = result.timings
    return pb.RetrieveResponse(
        matches=[
            pb.RetrievalMatch(
                chunk_id=match.chunk_id,
                content=match.content,
                score=match.score,
                scores=match.scores,
                document_id=match.document_id,
                title=match.title,
                domain=match.domain,
                metadata=metadata_to_struct(match.metadata),
                source=match.source,
                file_type=match.file_type,
                section=match.section,
                pages=match.pages,
            )
            for match in result.matches
        ],
        query=result.query,
        namespace=result.namespace,
        total_matches=result.total_matches,
        timings=pb.StageTimings(
            embed_ms=timings.embed_ms,
            search_ms=timings.search_ms,
            fetch_ms=timings.fetch_ms,
            total_ms=timings.total_ms,
        ),
        stage_ms=timings.stages,
        query_truncated=result.query_truncated,
        degraded=result.degraded,
        cached=result.cached,
        statistics=pb.MatchStatistics(**result.statistics.model_dump()),
        rewrites=[pb.QueryRewrite(**rewrite.model_dump()) for rewrite in result.rewrites],
        query_used=result.query_used,
    )


def stages_from_proto(response: pb.RetrieveResponse) -> dict[str, float]:
    """Per-stage milliseconds; a server older than ``stage_ms`` sends only the fixed fields."""
    if response.stage_ms:
        return dict(response.stage_ms)
    timings = response.timings
    named = {
        EMBED_STAGE: timings.embed_ms,
        SEARCH_STAGE: timings.search_ms,
        FETCH_STAGE: timings.fetch_ms,
    }
    return {name: ms for name, ms in named.items() if ms}


def result_from_proto(response: pb.RetrieveResponse) -> RetrievalResult:
    matches = tuple(
        RetrievalMatch(
            chunk_id=match.chunk_id,
            content=match.content,
            score=match.score,
            scores=dict(match.scores),
            document_id=match.document_id,
            title=match.title,
            domain=match.domain,
            metadata=metadata_from_struct(match.metadata),
            source=optional_field(match, "source"),
            file_type=optional_field(match, "file_type"),
            section=match.section,
            pages=tuple(match.pages),
        )
        for match in response.matches
    )
    return RetrievalResult(
        matches=matches,
        query=response.query,
        namespace=response.namespace,
        total_matches=response.total_matches,
        timings=StageTimings(
            stages=stages_from_proto(response), total_ms=response.timings.total_ms
        ),
        query_truncated=response.query_truncated,
        degraded=tuple(response.degraded),
        cached=response.cached,
        statistics=(
            statistics_from_proto(response.statistics)
            if response.HasField("statistics")
            else MatchStatistics.of([match.score for match in matches])
        ),
        rewrites=tuple(
            QueryRewrite(
                attempt=rewrite.attempt,
                method=rewrite.method,
                query=rewrite.query,
                reason=rewrite.reason,
                error=optional_field(rewrite, "error"),
                best_cosine=optional_field(rewrite, "best_cosine"),
            )
            for rewrite in response.rewrites
        ),
        query_used=response.query_used,
    )


def statistics_from_proto(statistics: pb.MatchStatistics) -> MatchStatistics:
    return MatchStatistics(
        matches=statistics.matches,
        **present(statistics, ("mean_score", "max_score", "min_score")),
    )


def source_to_proto(source: Source | None) -> pb.Source | None:
    if source is None:
        return None
    return pb.Source(
        uri=source.uri,
        root=source.root,
        file_type=source.file_type,
        size=source.size,
        modified_at=timestamp_of(source.modified_at),
    )


def source_fields(source: pb.Source, field: str) -> dict[str, Any]:
    """The fields of ``Source`` a message carries, for the model to validate."""
    return {
        "uri": source.uri,
        **present(source, ("root", "file_type", "size")),
        "modified_at": moment_of(source, "modified_at", f"{field}.modified_at"),
    }


def document_to_proto(document: RagDocument) -> pb.Document:
    return pb.Document(
        document_id=document.document_id,
        title=document.title,
        domain=document.domain,
        content=document.content,
        metadata=metadata_to_struct(document.metadata),
        source=source_to_proto(document.source),
    )


def documents_from_proto(documents: Iterable[pb.Document]) -> list[RagDocument]:
    """Validated documents; the first invalid one raises, naming ``documents[i].<field>``."""
    parsed = []
    for position, document in enumerate(documents):
        field = f"documents[{position}]"
        source = (
            source_fields(document.source, f"{field}.source")
            if document.HasField("source")
            else None
        )
        try:
            parsed.append(
                RagDocument(
                    document_id=document.document_id,
                    title=document.title,
                    domain=document.domain,
                    content=document.content,
                    metadata=metadata_from_struct(document.metadata),
                    source=source,
                )
            )
        except ValidationError as error:
            raise invalid_request(error, field) from error
    return parsed


def sources_from_proto(sources: Iterable[str], field: str) -> list[str]:
    """Paths or URLs as sources are stored, or InvalidRequestError naming ``field``."""
    return [stored_source(source, field) for source in sources]


def stored_source(value: str, field: str) -> str:
    try:
        return check_source(value)
    except ValueError as error:
        raise InvalidRequestError(str(error), field=field) from None


def outcome_to_proto(outcome: DocumentOutcome) -> pb.DocumentOutcome:
    return pb.DocumentOutcome(
        document_id=outcome.document_id,
        outcome=OUTCOMES[outcome.outcome],
        chunks=outcome.chunks,
        error=outcome.error,
        source=outcome.source,
        field=outcome.field,
    )


def outcome_from_proto(outcome: pb.DocumentOutcome) -> DocumentOutcome:
    return DocumentOutcome(
        document_id=outcome.document_id,
        outcome=OUTCOMES_BY_NUMBER[outcome.outcome],
        chunks=outcome.chunks,
        error=optional_field(outcome, "error"),
        source=optional_field(outcome, "source"),
        field=optional_field(outcome, "field"),
    )


def outcomes_to_proto(outcomes: Iterable[DocumentOutcome]) -> pb.IngestDocumentsResponse:
    return pb.IngestDocumentsResponse(outcomes=[outcome_to_proto(o) for o in outcomes])


def outcomes_from_proto(response: pb.IngestDocumentsResponse) -> list[DocumentOutcome]:
    return [outcome_from_proto(outcome) for outcome in response.outcomes]


def sync_request(
    documents: Sequence[RagDocument],
    roots: Sequence[str],
    namespace: str | None,
    *,
    unreadable: Iterable[str],
    dry_run: bool,
    replace: bool,
    allow_mass_delete: bool,
    refused_as_outcomes: bool,
) -> pb.SyncDocumentsRequest:
    return pb.SyncDocumentsRequest(
        namespace=namespace or "",
        documents=[document_to_proto(document) for document in documents],
        roots=roots,
        unreadable=sorted(unreadable),
        dry_run=dry_run,
        replace=replace,
        allow_mass_delete=allow_mass_delete,
        refused_as_outcomes=refused_as_outcomes,
    )


def sync_report_to_proto(report: SyncReport) -> pb.SyncDocumentsResponse:
    return pb.SyncDocumentsResponse(
        namespace=report.namespace,
        dry_run=report.dry_run,
        outcomes=[outcome_to_proto(outcome) for outcome in report.outcomes],
        busy=report.busy,
    )


def sync_report_from_proto(response: pb.SyncDocumentsResponse) -> SyncReport:
    return SyncReport(
        namespace=response.namespace,
        dry_run=response.dry_run,
        outcomes=tuple(outcome_from_proto(outcome) for outcome in response.outcomes),
        busy=tuple(response.busy),
    )


def summary_to_proto(summary: DocumentSummary) -> pb.DocumentSummary:
    return pb.DocumentSummary(
        document_id=summary.document_id,
        title=summary.title,
        source=summary.source,
        file_type=summary.file_type,
        chunks=summary.chunks,
        updated_at=timestamp_of(summary.updated_at),
        pending=summary.pending,
    )


def summary_from_proto(summary: pb.DocumentSummary) -> DocumentSummary:
    return DocumentSummary(
        document_id=summary.document_id,
        title=optional_field(summary, "title"),
        source=optional_field(summary, "source"),
        file_type=optional_field(summary, "file_type"),
        chunks=summary.chunks,
        updated_at=moment_of(summary, "updated_at", "updated_at"),
        pending=summary.pending,
    )


def page_size(request: pb.ListDocumentsRequest) -> int:
    size = request.page_size if request.HasField("page_size") else MAX_PAGE_SIZE
    if not 1 <= size <= MAX_PAGE_SIZE:
        raise InvalidRequestError(f"must be 1 to {MAX_PAGE_SIZE}", field="page_size")
    return size


def documents_page(
    documents: Sequence[DocumentSummary], size: int, page_token: str
) -> pb.ListDocumentsResponse:
    """The ``size`` documents, by id, after the id ``page_token``."""
    ordered = sorted(documents, key=lambda summary: summary.document_id)
    after = [summary for summary in ordered if summary.document_id > page_token]
    page = after[:size]
    return pb.ListDocumentsResponse(
        documents=[summary_to_proto(summary) for summary in page],
        next_page_token=page[-1].document_id if len(after) > size else "",
    )


def delete_report_to_proto(report: DeleteReport) -> pb.DeleteDocumentsResponse:
    return pb.DeleteDocumentsResponse(
        namespace=report.namespace,
        dry_run=report.dry_run,
        deleted=[summary_to_proto(summary) for summary in report.deleted],
        busy=report.busy,
        missing=report.missing,
        chunks=report.chunks,
    )


def delete_report_from_proto(response: pb.DeleteDocumentsResponse) -> DeleteReport:
    return DeleteReport(
        namespace=response.namespace,
        dry_run=response.dry_run,
        deleted=tuple(summary_from_proto(summary) for summary in response.deleted),
        busy=tuple(response.busy),
        missing=tuple(response.missing),
        chunks=response.chunks,
    )


def citation_to_proto(citation: Citation) -> pb.Citation:
    return pb.Citation(
        number=citation.number,
        chunk_id=citation.chunk_id,
        document_id=citation.document_id,
        title=citation.title,
        domain=citation.domain,
        source=citation.source,
        section=citation.section,
        pages=citation.pages,
    )


def citation_from_proto(citation: pb.Citation) -> Citation:
    return Citation(
        number=citation.number,
        chunk_id=citation.chunk_id,
        document_id=citation.document_id,
        title=citation.title,
        domain=citation.domain,
        source=optional_field(citation, "source"),
        section=citation.section,
        pages=tuple(citation.pages),
    )


def built_context_to_proto(context: BuiltContext) -> pb.Context:
    return pb.Context(
        text=context.text,
        citations=[citation_to_proto(c) for c in context.citations],
        tokens=context.tokens,
        dropped=context.dropped,
        truncated=context.truncated,
    )


def built_context_from_proto(context: pb.Context) -> BuiltContext:
    return BuiltContext(
        text=context.text,
        citations=tuple(citation_from_proto(c) for c in context.citations),
        tokens=context.tokens,
        dropped=tuple(context.dropped),
        truncated=context.truncated,
    )


def context_result_to_proto(result: ContextResult) -> pb.BuildContextResponse:
    return pb.BuildContextResponse(
        context=built_context_to_proto(result.context),
        retrieval=result_to_proto(result.retrieval),
    )


def context_result_from_proto(response: pb.BuildContextResponse) -> ContextResult:
    return ContextResult(
        context=built_context_from_proto(response.context),
        retrieval=result_from_proto(response.retrieval),
    )


def answer_to_proto(answer: Answer) -> pb.AnswerResponse:
    return pb.AnswerResponse(
        answered=answer.answered,
        text=answer.text,
        citations=[citation_to_proto(c) for c in answer.citations],
        unknown_citations=answer.unknown_citations,
        confidence=answer.confidence,
        model=answer.model,
        finish_reason=answer.finish_reason,
        context=built_context_to_proto(answer.context),
        generation_ms=answer.generation_ms,
        query_truncated=answer.query_truncated,
        degraded=answer.degraded,
        namespace=answer.namespace,
    )


def answer_from_proto(response: pb.AnswerResponse, query: str) -> Answer:
    """The answer to ``query``; the retrieval's timings stay on the server (its log line
    has them)."""
    return Answer(
        answered=response.answered,
        text=response.text,
        citations=tuple(citation_from_proto(c) for c in response.citations),
        unknown_citations=tuple(response.unknown_citations),
        confidence=response.confidence,
        context=built_context_from_proto(response.context),
        model=response.model if response.HasField("model") else None,
        finish_reason=response.finish_reason if response.HasField("finish_reason") else None,
        query=query,
        namespace=response.namespace,
        retrieval_timings=StageTimings(),
        generation_ms=response.generation_ms,
        query_truncated=response.query_truncated,
        degraded=tuple(response.degraded),
    )


def answer_event_to_proto(event: AnswerEvent) -> pb.AnswerStreamResponse:
    if isinstance(event, AnswerDelta):
        return pb.AnswerStreamResponse(delta=event.text)
    return pb.AnswerStreamResponse(answer=answer_to_proto(event.answer))


def answer_event_from_proto(message: pb.AnswerStreamResponse, query: str) -> AnswerEvent:
    """The event of one message of a streamed answer to ``query``."""
    if message.HasField("answer"):
        return AnswerDone(answer=answer_from_proto(message.answer, query))
    return AnswerDelta(text=message.delta)


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
