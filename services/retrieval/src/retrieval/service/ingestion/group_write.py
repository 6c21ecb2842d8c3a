"""One group of documents written under one lease, up to its commit point.

Each document's write goes through its ledger record (``retrieval.domain.ledger``), under a
lease so one writer at a time touches a document:

1. claim the documents; a document whose committed record matches is UNCHANGED;
2. save the record PENDING (new chunk ids, the committed ones kept as ``previous``);
3. embed, write chunk texts, then vectors and keyword entries (a search never finds a
   chunk whose text is missing);
4. save the record COMMITTED: the commit point;
5. remove the chunks of older versions (``stale``): vectors and keyword entries, then texts.

A failure before the commit removes the chunks the write added and restores the previous
record; if even that fails, or a call cancelled at its deadline runs out of undo time
(``retrieval.deadlines``), the PENDING record makes the next run (or
``reconcile``, or the server's repair) repair the document. See ``docs/ingestion.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial

import numpy as np
import structlog

from retrieval.batching import gather_bounded, slices
from retrieval.deadlines import undo_bound
from retrieval.domain.ledger import DocumentRecord, DocumentState, Lease, Provenance
from retrieval.errors import DocumentBusyError, RetrievalError
from retrieval.ports import Embedder
from retrieval.ports.document_ledger import DocumentLedger
from retrieval.ports.embedder import Matrix
from retrieval.ports.namespace_generations import NamespaceGenerations
from retrieval.service.ingestion.chunking import Prepared
from retrieval.service.ingestion.consistency import ChunkStores
from retrieval.service.ingestion.leases import claim_documents, release_documents, writer_lease
from retrieval.service.ingestion.namespaces import advance_generation
from retrieval.service.ingestion.outcomes import DocumentOutcome, Outcome, failed
from retrieval.service.ingestion.progress import EMBEDDING_BATCH, EmbeddedTally, LeaseRenewal
from retrieval.service.timing import StageClock

log = structlog.get_logger("ingestion")

LOOKUPS_AT_ONCE = 8
"""Lookups of the chunk texts of a group's documents that have no record yet, sent side by
side: a restore into an empty namespace makes one for every document."""


@dataclass
class Write:
    """One document to write under its pending record."""

    prepared: Prepared
    pending: DocumentRecord

    @property
    def outcome(self) -> Outcome:
        return Outcome.UPDATED if self.pending.previous else Outcome.CREATED


@dataclass(frozen=True)
class GroupCall:
    """What one group's write is given: where, whether it may take another source's ids,
    the tally of its embedded passages, and the clock of its stages."""

    namespace: str
    replace: bool
    tally: EmbeddedTally
    clock: StageClock


def done(item: Prepared, outcome: Outcome) -> DocumentOutcome:
    return DocumentOutcome(
        document_id=item.document_id, outcome=outcome, chunks=len(item.chunks), source=item.source
    )


@dataclass(frozen=True, eq=False)
class GroupWriter:
    """Writes groups of checked documents; the only writer of chunk texts, vectors, keyword
    entries and ledger records of a write."""

    embedder: Embedder
    stores: ChunkStores
    ledger: DocumentLedger
    generations: NamespaceGenerations
    lease_wait_s: float
    lease_renew_s: float

    async def write(self, group: Sequence[Prepared], call: GroupCall) -> list[DocumentOutcome]:
        """One outcome per document of ``group``, in order; unchanged ones cost one lookup."""
        ids = [item.document_id for item in group]
        with call.clock.stage("lookup"):
            known = await self.ledger.get_many(call.namespace, ids)
        outcomes = {
            item.document_id: done(item, Outcome.UNCHANGED)
            for item in group
            if item.document_id in known and known[item.document_id].is_current(item.fingerprint)
        }
        todo = [item for item in group if item.document_id not in outcomes]
        if todo:
            with writer_lease() as lease:
                outcomes |= await self._claimed(todo, call, lease)
        log.info(
            "ingest.group",
            namespace=call.namespace,
            documents=len(group),
            outcomes={
                kind.value: sum(o.outcome is kind for o in outcomes.values()) for kind in Outcome
            },
            **{f"{stage}_ms": round(ms, 2) for stage, ms in call.clock.stages.items()},
            total_ms=round(call.clock.elapsed_ms(), 2),
        )
        return [outcomes[document_id] for document_id in ids]

    async def _claimed(
        self, group: Sequence[Prepared], call: GroupCall, lease: Lease
    ) -> dict[str, DocumentOutcome]:
        namespace = call.namespace
        with call.clock.stage("claim"):
            ids = [item.document_id for item in group]
            claim = await claim_documents(self.ledger, namespace, ids, lease, self.lease_wait_s)
        outcomes = {
            document_id: failed(document_id, DocumentBusyError.of(namespace, document_id))
            for document_id in claim.held
        }
        try:
            to_begin: list[tuple[DocumentRecord, Prepared]] = []
            settled: list[DocumentRecord] = []
            for item in group:
                record = claim.records.get(item.document_id)
                if record is None:
                    continue
                clash = None if call.replace else record.clash(item.source)
                if clash is not None:
                    outcomes[item.document_id] = failed(item.document_id, clash, item.source)
                elif (
                    record.state is DocumentState.COMMITTED
                    and record.fingerprint == item.fingerprint
                ):
                    settled.append(record)
                    outcomes[item.document_id] = done(item, Outcome.UNCHANGED)
                else:
                    to_begin.append((record, item))
            pending = await gather_bounded(
                [partial(self._begin, record, item) for record, item in to_begin], LOOKUPS_AT_ONCE
            )
            writes = [Write(item, p) for (_, item), p in zip(to_begin, pending, strict=True)]
            if writes:
                written = await self._write(writes, call, lease)
                outcomes |= written
                settled += [
                    w.pending.commit()
                    for w in writes
                    if written[w.prepared.document_id].outcome is not Outcome.FAILED
                ]
            with call.clock.stage("remove_stale"):
                await self._remove_stale([r for r in settled if r.stale], lease)
        finally:
            await advance_generation(self.generations, namespace)
            await release_documents(self.ledger, namespace, list(claim.records), lease)
        return outcomes

    async def _begin(self, record: DocumentRecord, item: Prepared) -> DocumentRecord:
        """The pending record; a document stored without a record (or whose record was lost)
        has its existing chunks counted as stale, so nothing of it is left behind."""
        found = (
            await self.stores.texts.chunk_ids(item.document_id, record.namespace)
            if record.state is None
            else ()
        )
        provenance = Provenance(
            title=item.document.title, source=item.document.source, written_at=datetime.now(UTC)
        )
        return record.begin(
            (chunk.chunk_id for chunk in item.chunks), item.fingerprint, provenance, found
        )

    async def _write(
        self, writes: Sequence[Write], call: GroupCall, lease: Lease
    ) -> dict[str, DocumentOutcome]:
        pending = [write.pending for write in writes]
        clock = call.clock
        try:
            with clock.stage("begin"):
                await self.ledger.save(pending, lease)
            renewal = LeaseRenewal(self.ledger, pending, lease, self.lease_renew_s)
            with clock.stage("embed"):
                vectors = await self._vectors([w.prepared for w in writes], call.tally, renewal)
            chunks = [chunk for write in writes for chunk in write.prepared.chunks]
            with clock.stage("write_texts"):
                await self.stores.texts.upsert_many(chunks)
            graph = {r.id: r for w in writes for r in w.prepared.graph or ()}
            with clock.stage("write_search"):
                await self.stores.add_searchable(chunks, vectors, call.namespace, graph)
            with clock.stage("commit"):
                await self.ledger.save([record.commit() for record in pending], lease)
        except BaseException as error:
            await self._abandon(pending, call.namespace, lease)
            if not isinstance(error, RetrievalError):
                raise
            log.error("ingest.failed", namespace=call.namespace, error=str(error))
            return {
                write.prepared.document_id: failed(
                    write.prepared.document_id, error, write.prepared.source
                )
                for write in writes
            }
        return {write.prepared.document_id: done(write.prepared, write.outcome) for write in writes}

    async def _vectors(
        self, items: Sequence[Prepared], tally: EmbeddedTally, renewal: LeaseRenewal
    ) -> Matrix:
        missing = [chunk.content for item in items if item.vectors is None for chunk in item.chunks]
        embedded = await self._embed_in_batches(missing, tally, renewal) if missing else None
        rows: list[Matrix] = []
        taken = 0
        for item in items:
            if item.vectors is not None:
                rows.append(item.vectors)
            else:
                assert embedded is not None
                rows.append(embedded[taken : taken + len(item.chunks)])
                taken += len(item.chunks)
        return np.concatenate(rows).astype(np.float32, copy=False)

    async def _embed_in_batches(
        self, texts: Sequence[str], tally: EmbeddedTally, renewal: LeaseRenewal
    ) -> Matrix:
        """Passage vectors, ``EMBEDDING_BATCH`` texts per call, each call counted in the
        group's tally and followed by a renewal of the write's lease when one is due."""
        batches: list[Matrix] = []
        for batch in slices(texts, EMBEDDING_BATCH):
            batches.append(await self.embedder.embed_passages(batch))
            tally.add(len(batch))
            await renewal()
        return np.concatenate(batches)

    async def _abandon(
        self, pending: Sequence[DocumentRecord], namespace: str, lease: Lease
    ) -> None:
        """Undo a write that did not commit. The record is made PENDING again first (the
        commit may have landed unseen), so a failure here, or the end of a stopped call's undo
        time (``undo_bound``), leaves a state the next run or the repair finishes."""
        fresh = sorted({chunk for record in pending for chunk in record.fresh})
        try:
            async with undo_bound():
                await self.ledger.save(pending, lease)
                await self.stores.remove(fresh, namespace)
                await self.ledger.save([record.abandon() for record in pending], lease)
        except RetrievalError as error:
            log.error(
                "ingest.rollback_failed",
                namespace=namespace,
                documents=[record.document_id for record in pending],
                error=str(error),
            )

    async def _remove_stale(self, records: Sequence[DocumentRecord], lease: Lease) -> None:
        """Remove older versions' chunks after their commit; what fails stays listed as stale
        in the record and is removed by the next write or ``reconcile``."""
        if not records:
            return
        namespace = records[0].namespace
        stale = sorted({chunk for record in records for chunk in record.stale})
        try:
            await self.stores.remove(stale, namespace)
            await self.ledger.save([record.cleaned() for record in records], lease)
        except RetrievalError as error:
            log.warning(
                "ingest.stale_left", namespace=namespace, chunks=len(stale), error=str(error)
            )
