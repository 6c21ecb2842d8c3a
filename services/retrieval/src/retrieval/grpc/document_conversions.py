"""Documents, their sources, and what ingesting, syncing, listing and deleting them report,
as ``retrieval.v1`` messages and back."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import ValidationError

from retrieval.domain.models import RagDocument, given_namespace, invalid_request
from retrieval.domain.provenance import check_source
from retrieval.errors import InvalidRequestError
from retrieval.grpc.proto_values import (
    metadata_from_struct,
    moment_of,
    optional_field,
    optional_namespace,
    plain_fields,
    present,
)
from retrieval.service.ingestion.library import DocumentSummary
from retrieval.service.ingestion.outcomes import DeleteReport, DocumentOutcome, Outcome, SyncReport
from retrieval.service.ingestion.requests import DeleteRequest, SyncRequest
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb

OUTCOMES = {
    Outcome.CREATED: pb.OUTCOME_CREATED,
    Outcome.UPDATED: pb.OUTCOME_UPDATED,
    Outcome.UNCHANGED: pb.OUTCOME_UNCHANGED,
    Outcome.FAILED: pb.OUTCOME_FAILED,
    Outcome.DELETED: pb.OUTCOME_DELETED,
}


OUTCOMES_BY_NUMBER = {number: outcome for outcome, number in OUTCOMES.items()}


MAX_PAGE_SIZE = 1000


def source_fields(source: pb.Source, field: str) -> dict[str, Any]:
    """The fields of ``Source`` a message carries, for the model to validate."""
    return {
        "uri": source.uri,
        **present(source, ("root", "file_type", "size")),
        "modified_at": moment_of(source, "modified_at", f"{field}.modified_at"),
    }


def document_to_proto(document: RagDocument) -> pb.Document:
    return pb.Document(**document.model_dump())


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
        **outcome.model_dump(exclude={"outcome"}), outcome=OUTCOMES[outcome.outcome]
    )


def outcome_from_proto(outcome: pb.DocumentOutcome) -> DocumentOutcome:
    return DocumentOutcome(
        **plain_fields(outcome, DocumentOutcome), outcome=OUTCOMES_BY_NUMBER[outcome.outcome]
    )


def outcomes_to_proto(outcomes: Iterable[DocumentOutcome]) -> pb.IngestDocumentsResponse:
    return pb.IngestDocumentsResponse(outcomes=[outcome_to_proto(o) for o in outcomes])


def outcomes_from_proto(response: pb.IngestDocumentsResponse) -> list[DocumentOutcome]:
    return [outcome_from_proto(outcome) for outcome in response.outcomes]


def sync_request(request: SyncRequest) -> pb.SyncDocumentsRequest:
    return pb.SyncDocumentsRequest(
        namespace=given_namespace(request.namespace) or "",
        documents=[document_to_proto(document) for document in request.documents],
        roots=request.roots,
        unreadable=sorted(request.unreadable),
        dry_run=request.dry_run,
        replace=request.replace,
        allow_mass_delete=request.allow_mass_delete,
        refused_as_outcomes=request.refused_as_outcomes,
    )


def sync_request_from_proto(message: pb.SyncDocumentsRequest) -> SyncRequest:
    return SyncRequest(
        documents=documents_from_proto(message.documents),
        roots=list(message.roots),
        namespace=optional_namespace(message.namespace),
        unreadable=sources_from_proto(message.unreadable, "unreadable"),
        dry_run=message.dry_run,
        replace=message.replace,
        allow_mass_delete=message.allow_mass_delete,
        refused_as_outcomes=message.refused_as_outcomes,
    )


def sync_report_to_proto(report: SyncReport) -> pb.SyncDocumentsResponse:
    return pb.SyncDocumentsResponse(
        **report.model_dump(exclude={"outcomes"}),
        outcomes=[outcome_to_proto(outcome) for outcome in report.outcomes],
    )


def sync_report_from_proto(response: pb.SyncDocumentsResponse) -> SyncReport:
    return SyncReport(
        **plain_fields(response, SyncReport),
        outcomes=tuple(outcome_from_proto(outcome) for outcome in response.outcomes),
    )


def summary_to_proto(summary: DocumentSummary) -> pb.DocumentSummary:
    return pb.DocumentSummary(**summary.model_dump())


def summary_from_proto(summary: pb.DocumentSummary) -> DocumentSummary:
    return DocumentSummary(
        **plain_fields(summary, DocumentSummary),
        updated_at=moment_of(summary, "updated_at", "updated_at"),
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


def delete_request_from_proto(message: pb.DeleteDocumentsRequest) -> DeleteRequest:
    return DeleteRequest(
        namespace=optional_namespace(message.namespace),
        document_ids=list(message.document_ids),
        source_prefix=optional_field(message, "source_prefix"),
        dry_run=message.dry_run,
    )


def delete_report_to_proto(report: DeleteReport) -> pb.DeleteDocumentsResponse:
    return pb.DeleteDocumentsResponse(**report.model_dump())


def delete_report_from_proto(response: pb.DeleteDocumentsResponse) -> DeleteReport:
    return DeleteReport(
        **plain_fields(response, DeleteReport),
        deleted=tuple(summary_from_proto(summary) for summary in response.deleted),
    )
