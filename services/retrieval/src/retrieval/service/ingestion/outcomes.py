"""What a write did to each document, and what a delete or a sync reports."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from pydantic import Field

from retrieval.domain.models import Frozen
from retrieval.errors import InvalidRequestError
from retrieval.service.ingestion.library import DocumentSummary


class Outcome(StrEnum):
    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    DELETED = "deleted"
    FAILED = "failed"


class DocumentOutcome(Frozen):
    """What a write did to one document."""

    document_id: str = Field(description="The document.")
    outcome: Outcome = Field(description="Created, updated, unchanged, deleted or failed.")
    chunks: int = Field(description="Chunks of the version written, or of the one deleted.")
    error: str | None = Field(default=None, description="Why it failed.")
    source: str | None = Field(default=None, description="The document's path or URL.")
    field: str | None = Field(
        default=None,
        description="The document field the checks refused; set on a refusal only, when "
        "nothing of the document was written.",
    )

    @property
    def refused(self) -> bool:
        return self.field is not None


class DeleteReport(Frozen):
    """What ``delete`` removed (or, in a dry run, would remove)."""

    namespace: str = Field(description="The namespace.")
    dry_run: bool = Field(description="True when nothing was changed.")
    deleted: tuple[DocumentSummary, ...] = Field(description="Documents deleted.")
    busy: tuple[str, ...] = Field(description="Documents being written by another call.")
    missing: tuple[str, ...] = Field(description="Documents named that the namespace lacks.")
    chunks: int = Field(ge=0, description="Chunk texts removed.")


class SyncReport(Frozen):
    """What ``sync`` did (or, in a dry run, would do) to each document."""

    namespace: str = Field(description="The namespace.")
    dry_run: bool = Field(description="True when nothing was changed.")
    outcomes: tuple[DocumentOutcome, ...] = Field(description="One per document touched.")
    busy: tuple[str, ...] = Field(
        default=(), description="Documents to delete that another call was writing."
    )

    def count(self, outcome: Outcome) -> int:
        return sum(o.outcome is outcome for o in self.outcomes)


def failed(document_id: str, error: Exception, source: str | None = None) -> DocumentOutcome:
    return DocumentOutcome(
        document_id=document_id, outcome=Outcome.FAILED, chunks=0, error=str(error), source=source
    )


def refusal_outcome(
    document_id: str, error: InvalidRequestError, source: str | None
) -> DocumentOutcome:
    return DocumentOutcome(
        document_id=document_id,
        outcome=Outcome.FAILED,
        chunks=0,
        error=error.reason,
        source=source,
        field=error.field,
    )


def accepted(outcomes: Iterable[DocumentOutcome]) -> tuple[DocumentOutcome, ...]:
    """The outcomes of the documents the checks let through (``DocumentOutcome.refused``)."""
    return tuple(outcome for outcome in outcomes if not outcome.refused)


def deleted_outcome(summary: DocumentSummary) -> DocumentOutcome:
    return DocumentOutcome(
        document_id=summary.document_id,
        outcome=Outcome.DELETED,
        chunks=summary.chunks,
        source=summary.source,
    )
