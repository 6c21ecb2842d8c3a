"""A namespace kept in step with the files it came from.

``sync`` ingests what the roots hold and then deletes the documents whose source lies under
a root but which the roots no longer produce: files deleted or renamed, entries removed from
a collection, documents whose id changed. A file that could not be read keeps its documents.
Before anything is written, a sync that would delete more than ``max_delete_share`` of the
namespace stops with ``MassDeleteError``, unless the caller allows it: a wrong path must not
empty a knowledge base.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from retrieval.domain.ledger import DocumentRecord
from retrieval.domain.provenance import is_under
from retrieval.errors import InvalidRequestError, MassDeleteError
from retrieval.ports.document_ledger import DocumentLedger
from retrieval.service.ingestion.chunking import Prepared
from retrieval.service.ingestion.group_write import done
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.ingestion.library import (
    DocumentSummary,
    Removal,
    checked_source,
    stored_records,
    under_any,
)
from retrieval.service.ingestion.library_service import Library
from retrieval.service.ingestion.outcomes import (
    DocumentOutcome,
    Outcome,
    SyncReport,
    deleted_outcome,
    failed,
)
from retrieval.service.ingestion.progress import Progress
from retrieval.service.ingestion.requests import SyncRequest


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


def planned(item: Prepared, record: DocumentRecord | None, replace: bool) -> DocumentOutcome:
    if record is None:
        return done(item, Outcome.CREATED)
    clash = None if replace else record.clash(item.source)
    if clash is not None:
        return failed(item.document_id, clash, item.source)
    return done(item, Outcome.UNCHANGED if record.is_current(item.fingerprint) else Outcome.UPDATED)


@dataclass(frozen=True, eq=False)
class LibrarySync:
    """Plans and applies syncs: the writer ingests, the library deletes."""

    writer: IngestionService
    library: Library
    ledger: DocumentLedger
    max_delete_share: float

    async def sync(self, request: SyncRequest, on_progress: Progress | None = None) -> SyncReport:
        """Make the namespace hold exactly what the request's roots hold: ingest its documents
        (read from under the roots, each with its source), then delete the documents whose
        source lies under a root and that the documents no longer include. Documents of an
        ``unreadable`` source (a file that failed to read) are kept. The documents are checked
        as ``IngestionService.ingest`` checks them; with ``refused_as_outcomes`` the sources of
        refused documents are kept as unreadable ones are.
        """
        replace, dry_run = request.replace, request.dry_run
        target = self.writer.namespace(request.namespace)
        documents = await self.writer.identify(request.documents, target, replace=replace)
        prepared = self.writer.prepare(documents, target)
        screened = self.writer.screen(prepared, request.refused_as_outcomes)
        checked = [checked_source(root, "roots") for root in request.roots]
        inside = under_any(checked)
        if not checked:
            raise InvalidRequestError("a sync needs at least one root", field="roots")
        for item in prepared:
            if not any(is_under(item.source, root) for root in checked):
                raise InvalidRequestError(
                    f"document {item.document_id!r} has source {item.source!r}, under no root",
                    field="documents.source",
                )
        records = await stored_records(self.ledger, target)
        kept = {*request.unreadable, *screened.refused_sources}
        doomed = doomed_by_sync(records, inside, {i.document_id for i in prepared}, kept)
        total = len(records)
        if doomed and not request.allow_mass_delete and len(doomed) > self.max_delete_share * total:
            raise MassDeleteError(target, len(doomed), total, self.max_delete_share)
        accepted = screened.accepted
        if dry_run:
            written = await self._plan(accepted, target, replace=replace)
            removal = Removal(deleted=tuple(DocumentSummary.of(r) for r in doomed))
        else:
            written = await self.writer.write(accepted, target, on_progress, replace=replace)
            doomed_ids = [r.document_id for r in doomed]
            removal = await self.library.remove(target, doomed_ids, inside)
        return SyncReport(
            namespace=target,
            dry_run=dry_run,
            outcomes=(
                *screened.in_order(written),
                *(deleted_outcome(s) for s in removal.deleted),
            ),
            busy=removal.busy,
        )

    async def _plan(
        self, prepared: Sequence[Prepared], namespace: str, *, replace: bool
    ) -> list[DocumentOutcome]:
        known = await self.ledger.get_many(namespace, [item.document_id for item in prepared])
        return [planned(item, known.get(item.document_id), replace) for item in prepared]
