"""Deleting documents through the ledger, like every write: the documents are claimed under
one lease, their records retired (committed empty, every chunk stale) before any chunk is
removed, and removed when their chunks are gone. A crash at any instant leaves either the
document whole or a retired record whose stale chunks the next write or ``reconcile`` removes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import structlog

from retrieval.domain.ledger import DocumentRecord, Lease
from retrieval.ports.document_ledger import DocumentLedger
from retrieval.service.ingestion.consistency import ChunkStores
from retrieval.service.ingestion.leases import claim_documents, release_documents, writer_lease
from retrieval.service.ingestion.library import DocumentSummary, Removal

log = structlog.get_logger("library")

DOCUMENTS_PER_DELETE = 100


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
                    await release_documents(self._ledger, namespace, list(claim.records), lease)
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
