"""Finds and repairs what a crash, a failed rollback or an older version left in a namespace.

Per document, under its lease:
- a PENDING write whose chunks are all whole is committed (rolled forward), otherwise the
  chunks it added are removed and the previous version restored (rolled back);
- a committed chunk whose text lacks a vector is embedded again from its stored text;
- a committed chunk whose text is gone loses its vector too, and the record's fingerprint
  is cleared so the next ingest of that document writes it whole again;
- every other stored chunk of the document (stale, or unknown to the ledger) is removed,
  vector first, then text.
"""

from __future__ import annotations

from collections.abc import Sequence

import structlog
from pydantic import Field

from retrieval.domain.chunk_identity import vector_record
from retrieval.domain.ledger import DocumentRecord, DocumentState, Lease
from retrieval.domain.models import Frozen
from retrieval.ports import ChunkRepository, Embedder, VectorIndex
from retrieval.ports.document_ledger import DocumentLedger
from retrieval.service.consistency import NamespaceAudit, audit, remove_chunks
from retrieval.service.leases import claim_documents, new_lease

log = structlog.get_logger("reconcile")

DOCUMENTS_PER_CLAIM = 50


class ReconcileReport(Frozen):
    """What reconciling a namespace found, and what it repaired."""

    namespace: str = Field(description="Namespace checked.")
    dry_run: bool = Field(description="True when nothing was changed.")
    documents: int = Field(ge=0, description="Documents the ledger knows.")
    vectors_without_texts: int = Field(ge=0, description="Vectors whose chunk text is missing.")
    texts_without_vectors: int = Field(ge=0, description="Chunk texts whose vector is missing.")
    stale_chunks: int = Field(ge=0, description="Stored chunks of no current version.")
    pending_documents: int = Field(ge=0, description="Documents left half-ingested.")
    documents_to_repair: int = Field(ge=0, description="Documents with any of the above.")
    repaired_documents: int = Field(default=0, ge=0, description="Documents repaired.")
    busy_documents: tuple[str, ...] = Field(
        default=(), description="Documents another call was writing; run again later."
    )
    incomplete_documents: tuple[str, ...] = Field(
        default=(), description="Documents that lost chunk texts: ingest them again."
    )

    @property
    def is_consistent(self) -> bool:
        return self.documents_to_repair == 0


def found_in(namespace: str, result: NamespaceAudit, dry_run: bool) -> ReconcileReport:
    return ReconcileReport(
        namespace=namespace,
        dry_run=dry_run,
        documents=sum(record.state is not None for record in result.records.values()),
        vectors_without_texts=len(result.vectors_without_texts),
        texts_without_vectors=len(result.texts_without_vectors),
        stale_chunks=len(result.stale),
        pending_documents=len(result.pending),
        documents_to_repair=len(result.documents_to_repair),
    )


class Reconciliation:
    def __init__(
        self,
        embedder: Embedder,
        index: VectorIndex,
        chunks: ChunkRepository,
        ledger: DocumentLedger,
        lease_wait_s: float,
    ) -> None:
        self._embedder = embedder
        self._index = index
        self._chunks = chunks
        self._ledger = ledger
        self._lease_wait_s = lease_wait_s

    async def run(self, namespace: str, *, dry_run: bool) -> ReconcileReport:
        result = await audit(self._index, self._chunks, self._ledger, namespace)
        report = found_in(namespace, result, dry_run)
        if dry_run or result.is_consistent:
            return report
        todo = sorted(result.documents_to_repair)
        busy: list[str] = []
        incomplete: list[str] = []
        repaired = 0
        for start in range(0, len(todo), DOCUMENTS_PER_CLAIM):
            group = todo[start : start + DOCUMENTS_PER_CLAIM]
            lease = new_lease()
            claim = await claim_documents(self._ledger, namespace, group, lease, self._lease_wait_s)
            busy.extend(claim.held)
            try:
                for record in claim.records.values():
                    if not await self._repair(record, lease):
                        incomplete.append(record.document_id)
                    repaired += 1
            finally:
                await self._ledger.release(namespace, list(claim.records), lease)
        log.info("reconcile.done", namespace=namespace, repaired=repaired, busy=len(busy))
        return report.model_copy(
            update={
                "repaired_documents": repaired,
                "busy_documents": tuple(busy),
                "incomplete_documents": tuple(incomplete),
            }
        )

    async def _repair(self, record: DocumentRecord, lease: Lease) -> bool:
        """Make one document consistent; False when it lost texts and must be ingested again."""
        namespace, document_id = record.namespace, record.document_id
        texts = await self._chunks.chunk_ids(document_id, namespace)
        vectors = {
            chunk
            async for page in self._index.list_ids(namespace, prefix=f"{document_id}#")
            for chunk in page
        }
        if record.state is DocumentState.PENDING:
            if set(record.chunk_ids) <= texts & vectors:
                record = record.commit()
            else:
                fresh = list(record.fresh)
                await remove_chunks(self._index, self._chunks, fresh, namespace)
                texts -= set(fresh)
                vectors -= set(fresh)
                record = record.abandon()
        keep = set(record.chunk_ids) if record.state is DocumentState.COMMITTED else set()
        await self._embed_again(sorted((keep & texts) - vectors), namespace)
        lost = keep - texts
        if lost:
            record = record.model_copy(
                update={"chunk_ids": tuple(sorted(keep - lost)), "fingerprint": None}
            )
            keep -= lost
        await remove_chunks(self._index, self._chunks, sorted((texts | vectors) - keep), namespace)
        await self._ledger.save([record.cleaned()], lease)
        return not lost

    async def _embed_again(self, chunk_ids: Sequence[str], namespace: str) -> None:
        if not chunk_ids:
            return
        stored = await self._chunks.get_many(chunk_ids, namespace)
        chunks = [stored[chunk_id] for chunk_id in chunk_ids if chunk_id in stored]
        vectors = await self._embedder.embed_passages([chunk.content for chunk in chunks])
        records = [vector_record(chunk, v) for chunk, v in zip(chunks, vectors, strict=True)]
        await self._index.upsert(records, namespace)
