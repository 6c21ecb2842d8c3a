"""A namespace's documents as a knowledge base: read one, list them, delete them.

Deleting goes through the ledger like every write (``retrieval.service.ingestion.deletion``).
Keeping a namespace in step with the files it came from is ``retrieval.service.ingestion.sync``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from datetime import datetime

from pydantic import Field

from retrieval.domain.ledger import DocumentRecord, DocumentState
from retrieval.domain.models import Frozen, RagChunk
from retrieval.domain.provenance import check_source, is_under
from retrieval.errors import InvalidRequestError
from retrieval.ports.document_ledger import DocumentLedger


class DocumentSummary(Frozen):
    """One document of a namespace, as its ledger record describes it."""

    document_id: str = Field(description="The document.")
    title: str | None = Field(description="Its title; None if ingested before titles were kept.")
    source: str | None = Field(description="Its path or URL; None if it has none.")
    file_type: str | None = Field(description="Type of its file, when read from one.")
    chunks: int = Field(ge=0, description="Chunks of its current version.")
    updated_at: datetime | None = Field(description="When its current version was written.")
    pending: bool = Field(description="A write is under way, or died: reconcile completes it.")

    @classmethod
    def of(cls, record: DocumentRecord) -> DocumentSummary:
        provenance = record.provenance
        source = provenance.source if provenance is not None else None
        return cls(
            document_id=record.document_id,
            title=provenance.title if provenance is not None else None,
            source=source.uri if source is not None else None,
            file_type=source.file_type if source is not None else None,
            chunks=len(record.chunk_ids),
            updated_at=provenance.written_at if provenance is not None else None,
            pending=record.state is DocumentState.PENDING,
        )


class StoredDocument(Frozen):
    """One document of a namespace with the chunks of its current version."""

    summary: DocumentSummary = Field(description="The document, as its ledger record says.")
    chunks: tuple[RagChunk, ...] = Field(
        description="Its chunks by position; one whose text is not stored yet (a write under "
        "way) is absent."
    )


class Removal(Frozen):
    """Documents deleted (or, in a dry run, that would be), and those that were not."""

    deleted: tuple[DocumentSummary, ...] = Field(default=(), description="Documents deleted.")
    busy: tuple[str, ...] = Field(
        default=(), description="Documents another call was writing: not deleted, try again."
    )
    chunks: int = Field(default=0, ge=0, description="Chunk texts removed.")


async def stored_records(ledger: DocumentLedger, namespace: str) -> list[DocumentRecord]:
    """Every record of a namespace that holds a version (committed or pending)."""
    return [
        record
        async for page in ledger.list_records(namespace)
        for record in page
        if record.state is not None
    ]


def under_any(roots: Collection[str]) -> Callable[[DocumentRecord], bool]:
    """Whether a record's source lies under one of ``roots``."""
    return lambda record: any(is_under(record.source, root) for root in roots)


def checked_source(value: str, field: str) -> str:
    """A path or URL as sources are stored (absolute, normalised), or InvalidRequestError."""
    try:
        return check_source(value)
    except ValueError as error:
        raise InvalidRequestError(str(error), field=field) from None


def check_source_prefix(prefix: str | None) -> str | None:
    return None if prefix is None else checked_source(prefix, "source_prefix")
