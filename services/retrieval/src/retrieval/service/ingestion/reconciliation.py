"""Finds and repairs what a crash, a failed rollback or an older version left in a namespace.

Per document, under its lease:
- a PENDING write whose chunks are all whole is committed (rolled forward), otherwise the
  chunks it added are removed and the previous version restored (rolled back);
- a committed chunk whose text lacks a vector is embedded again from its stored text, one
  that lacks a keyword entry or a graph record is indexed again from it, and so is one whose
  graph record another extractor or record format made (``ChunkGraph.version``);
- a committed chunk whose text is gone loses its vector and keyword entry too, and the
  record's fingerprint
  is cleared so the next ingest of that document writes it whole again;
- every other stored chunk of the document (stale, or unknown to the ledger) is removed,
  vector and keyword entry first, then text.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import structlog
from pydantic import Field

from retrieval.domain.chunk_identity import vector_record
from retrieval.domain.ledger import DocumentRecord, DocumentState, Lease
from retrieval.domain.models import Frozen
from retrieval.ports import Embedder
from retrieval.ports.document_ledger import DocumentLedger
from retrieval.service.ingestion.consistency import ChunkStores, NamespaceAudit, audit
from retrieval.service.ingestion.leases import (
    claim_documents,
    holder_is_dead,
    this_host,
    writer_lease,
)

log = structlog.get_logger("reconcile")

DOCUMENTS_PER_CLAIM = 50


class ReconcileReport(Frozen):
    """What reconciling a namespace found, and what it repaired."""

    namespace: str = Field(description="Namespace checked.")
    dry_run: bool = Field(description="True when nothing was changed.")
    documents: int = Field(ge=0, description="Documents the ledger knows.")
    vectors_without_texts: int = Field(ge=0, description="Vectors whose chunk text is missing.")
    texts_without_vectors: int = Field(ge=0, description="Chunk texts whose vector is missing.")
    keywords_without_texts: int = Field(
        default=0, ge=0, description="Keyword entries whose chunk text is missing."
    )
    texts_without_keywords: int = Field(
        default=0, ge=0, description="Chunk texts whose keyword entry is missing."
    )
    texts_without_graph: int = Field(
        default=0, ge=0, description="Chunk texts whose graph record is missing."
    )
    graph_without_texts: int = Field(
        default=0, ge=0, description="Graph records whose chunk text is missing."
    )
    outdated_graph: int = Field(
        default=0,
        ge=0,
        description="Graph records another extractor or record format made, made again.",
    )
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
        keywords_without_texts=len(result.keywords_without_texts),
        texts_without_keywords=len(result.texts_without_keywords),
        texts_without_graph=len(result.texts_without_graph),
        graph_without_texts=len(result.graph_without_texts),
        outdated_graph=len(result.outdated_graph),
        stale_chunks=len(result.stale),
        pending_documents=len(result.pending),
        documents_to_repair=len(result.documents_to_repair),
    )


@dataclass
class Repairs:
    repaired: int = 0
    busy: list[str] = field(default_factory=list)
    incomplete: list[str] = field(default_factory=list)


@dataclass(frozen=True, eq=False)
class Reconciliation:
    embedder: Embedder
    stores: ChunkStores
    ledger: DocumentLedger
    lease_wait_s: float

    async def run(self, namespace: str, *, dry_run: bool) -> ReconcileReport:
        result = await audit(self.stores, self.ledger, namespace)
        report = found_in(namespace, result, dry_run)
        if dry_run or result.is_consistent:
            return report
        repairs = await self._repair_all(
            namespace, sorted(result.documents_to_repair), self.lease_wait_s
        )
        log.info(
            "reconcile.done",
            namespace=namespace,
            repaired=repairs.repaired,
            busy=len(repairs.busy),
        )
        return report.model_copy(
            update={
                "repaired_documents": repairs.repaired,
                "busy_documents": tuple(repairs.busy),
                "incomplete_documents": tuple(repairs.incomplete),
            }
        )

    async def recover(self) -> dict[str, int]:
        """Repair what writers left when they ended without settling their documents (a
        process killed, or stopped before it could undo a write it cut short): PENDING records
        no lease holds (a lease of another host holds until it expires), and documents
        leased to writers of this host that no longer run. Returns how many documents per
        namespace; the service runs this as it starts, and a server after every health probe."""
        left: dict[str, list[str]] = defaultdict(list)
        for record, lease in await self.ledger.unsettled(this_host()):
            if lease is None or holder_is_dead(lease):
                left[record.namespace].append(record.document_id)
        repaired: dict[str, int] = {}
        for namespace, document_ids in sorted(left.items()):
            repairs = await self._repair_all(namespace, document_ids, wait_s=0.0)
            repaired[namespace] = repairs.repaired
            log.info("reconcile.recovered", namespace=namespace, repaired=repairs.repaired)
        return repaired

    async def _repair_all(
        self, namespace: str, document_ids: Sequence[str], wait_s: float
    ) -> Repairs:
        repairs = Repairs()
        for start in range(0, len(document_ids), DOCUMENTS_PER_CLAIM):
            group = document_ids[start : start + DOCUMENTS_PER_CLAIM]
            with writer_lease() as lease:
                claim = await claim_documents(self.ledger, namespace, group, lease, wait_s)
                repairs.busy.extend(claim.held)
                try:
                    for record in claim.records.values():
                        if not await self._repair(record, lease):
                            repairs.incomplete.append(record.document_id)
                        repairs.repaired += 1
                finally:
                    await self.ledger.release(namespace, list(claim.records), lease)
        return repairs

    async def _repair(self, record: DocumentRecord, lease: Lease) -> bool:
        """Make one document consistent; False when it lost texts and must be ingested again."""
        namespace, document_id = record.namespace, record.document_id
        stores = self.stores
        texts = await stores.texts.chunk_ids(document_id, namespace)
        prefix = f"{document_id}#"
        vectors = {
            c async for page in stores.index.list_ids(namespace, prefix=prefix) for c in page
        }
        keywords = {
            c async for page in stores.keywords.list_ids(namespace, prefix=prefix) for c in page
        }
        listed = (
            {c async for page in stores.graph_ids(namespace, prefix=prefix) for c in page}
            if stores.graph is not None
            else set(texts)
        )
        graph = listed - {
            c async for page in stores.outdated_graph_ids(namespace, prefix=prefix) for c in page
        }
        if record.state is DocumentState.PENDING:
            if set(record.chunk_ids) <= texts & vectors & keywords & graph:
                record = record.commit()
            else:
                fresh = set(record.fresh)
                await stores.remove(sorted(fresh), namespace)
                texts, vectors, keywords, graph, listed = (
                    texts - fresh,
                    vectors - fresh,
                    keywords - fresh,
                    graph - fresh,
                    listed - fresh,
                )
                record = record.abandon()
        keep = set(record.chunk_ids) if record.state is DocumentState.COMMITTED else set()
        await self._index_again(keep & texts, vectors, keywords, graph, namespace)
        lost = keep - texts
        if lost:
            record = record.model_copy(
                update={"chunk_ids": tuple(sorted(keep - lost)), "fingerprint": None}
            )
            keep -= lost
        await stores.remove(sorted((texts | vectors | keywords | listed) - keep), namespace)
        await self.ledger.save([record.cleaned()], lease)
        return not lost

    async def _index_again(
        self,
        whole: set[str],
        vectors: set[str],
        keywords: set[str],
        graph: set[str],
        namespace: str,
    ) -> None:
        """Vectors (embedded again), keyword entries and graph records for stored texts that
        lack them."""
        missing = sorted(whole - (vectors & keywords & graph))
        if not missing:
            return
        stored = await self.stores.texts.get_many(missing, namespace)
        unembedded = [stored[c] for c in missing if c in stored and c not in vectors]
        if unembedded:
            embedded = await self.embedder.embed_passages([c.content for c in unembedded])
            await self.stores.index.upsert(
                [vector_record(c, v) for c, v in zip(unembedded, embedded, strict=True)],
                namespace,
            )
        await self.stores.add_keywords(
            [stored[c] for c in missing if c in stored and c not in keywords], namespace
        )
        await self.stores.add_graph(
            [stored[c] for c in missing if c in stored and c not in graph], namespace
        )
