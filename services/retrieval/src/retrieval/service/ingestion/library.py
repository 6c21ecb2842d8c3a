"""A namespace's documents as a knowledge base: list them, delete them, keep them in step
with the files they came from.

Deleting goes through the ledger like every write: the documents are claimed under one lease,
their records retired (committed empty, every chunk stale) before any chunk is removed, and
removed when their chunks are gone. A crash at any instant leaves either the document whole
or a retired record whose stale chunks the next write or ``reconcile`` removes.

``sync`` ingests what the roots hold and then deletes the documents whose source lies under
a root but which the roots no longer produce: files deleted or renamed, entries removed from
a collection, documents whose id changed. A file that could not be read keeps its documents.
Before anything is written, a sync that would delete more than ``max_delete_share`` of the
namespace stops with ``MassDeleteError``, unless the caller allows it: a wrong path must not
empty a knowledge base.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from datetime import datetime

import structlog
from pydantic import Field

from retrieval.domain.ledger import DocumentRecord, DocumentState, Lease
from retrieval.domain.models import Frozen, RagChunk
from retrieval.domain.provenance import check_source, is_under
from retrieval.errors import InvalidRequestError
from retrieval.ports.document_ledger import DocumentLedger
from retrieval.service.ingestion.consistency import ChunkStores
from retrieval.service.ingestion.leases import claim_documents, writer_lease

log = structlog.get_logger("library")

DOCUMENTS_PER_DELETE = 100


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


def doomed_by_sync(
    records: Sequence[DocumentRecord],
    inside: Callable[[DocumentRecord], bool],
    produced: Collection[str],
    unreadable: Collection[str],
) -> list[DocumentRecord]:
    """Records from under the roots (``inside``) that this sync did not produce, except
    those of sources that could not be read this time."""
    return [
        record
        for record in records
        if inside(record) and record.document_id not in produced and record.source not in unreadable
    ]


class Deletion:
    """Deletes documents under their leases, in groups of ``DOCUMENTS_PER_DELETE``."""

    def __init__(self, stores: ChunkStores, ledger: DocumentLedger, wait_s: float) -> None:
        self._stores = stores
        self._ledger = ledger
        self._wait_s = wait_s

    async def run(
        self,
        namespace: str,
        document_ids: Sequence[str],
        still_wanted: Callable[[DocumentRecord], bool] = lambda record: True,
    ) -> Removal:
        """Delete these documents; ``still_wanted`` is asked again under the lease, so a
        document another writer changed meanwhile (say, re-ingested from elsewhere) is kept."""
        deleted: list[DocumentSummary] = []
        busy: list[str] = []
        chunks = 0
        for start in range(0, len(document_ids), DOCUMENTS_PER_DELETE):
            group = list(document_ids[start : start + DOCUMENTS_PER_DELETE])
            with writer_lease() as lease:
                claim = await claim_documents(self._ledger, namespace, group, lease, self._wait_s)
                busy.extend(claim.held)
                try:
                    removal = await self._retire(
                        list(claim.records.values()), still_wanted, namespace, lease
                    )
                    deleted.extend(removal.deleted)
                    chunks += removal.chunks
                finally:
                    await self._ledger.release(namespace, list(claim.records), lease)
        return Removal(deleted=tuple(deleted), busy=tuple(busy), chunks=chunks)

    async def _retire(
        self,
        records: Sequence[DocumentRecord],
        still_wanted: Callable[[DocumentRecord], bool],
        namespace: str,
        lease: Lease,
    ) -> Removal:
        """Retire the records still wanted, remove their chunks (those stored without the
        ledger knowing them included), then clear the records."""
        retired: list[DocumentRecord] = []
        deleted: list[DocumentSummary] = []
        for record in records:
            found = await self._stores.texts.chunk_ids(record.document_id, namespace)
            if (record.state is None and not found) or not still_wanted(record):
                continue
            retired.append(record.retire(found))
            summary = DocumentSummary.of(record)
            deleted.append(summary.model_copy(update={"chunks": len(retired[-1].stale)}))
        if not retired:
            return Removal()
        await self._ledger.save(retired, lease)
        removed = await self._stores.remove(
            sorted({chunk for record in retired for chunk in record.stale}), namespace
        )
        await self._ledger.save([record.cleaned() for record in retired], lease)
        log.info("delete.done", namespace=namespace, documents=len(retired), chunks=removed)
        return Removal(deleted=tuple(deleted), chunks=removed)


def checked_source(value: str, field: str) -> str:
    """A path or URL as sources are stored (absolute, normalised), or InvalidRequestError."""
    try:
        return check_source(value)
    except ValueError as error:
        raise InvalidRequestError(str(error), field=field) from None


def check_source_prefix(prefix: str | None) -> str | None:
    return None if prefix is None else checked_source(prefix, "source_prefix")
