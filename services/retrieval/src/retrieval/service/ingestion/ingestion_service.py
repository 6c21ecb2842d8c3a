"""Documents in, searchable chunks out; after a failure, a crash or a cancellation, the stores
hold the previous version of every document or a state the next run repairs.

Each document's write goes through its ledger record (``retrieval.domain.ledger``), under a
lease so one writer at a time touches a document:

1. claim the documents; a document whose committed record matches is UNCHANGED;
2. save the record PENDING (new chunk ids, the committed ones kept as ``previous``);
3. embed, write chunk texts, then vectors and keyword entries (a search never finds a
   chunk whose text is missing);
4. save the record COMMITTED: the commit point;
5. remove the chunks of older versions (``stale``): vectors and keyword entries, then texts.

A failure before the commit removes the chunks the write added and restores the previous
record; if even that fails, the PENDING record makes the next run (or ``reconcile``) repair
the document. See ``docs/ingestion.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from typing import Protocol

import numpy as np
import structlog

from retrieval.batching import slices
from retrieval.domain.chunk_identity import chunk_id
from retrieval.domain.chunking import chunk_markdown
from retrieval.domain.ledger import DocumentRecord, DocumentState, Lease, Provenance, fingerprint
from retrieval.domain.metadata import model_signature
from retrieval.domain.models import RagChunk, RagDocument, check_slug
from retrieval.domain.provenance import is_under
from retrieval.errors import (
    DocumentBusyError,
    InvalidRequestError,
    MassDeleteError,
    NotFoundError,
    RetrievalError,
)
from retrieval.ports import ChunkRepository, Embedder, KeywordIndex, VectorIndex
from retrieval.ports.document_ledger import DocumentLedger
from retrieval.ports.embedder import Matrix
from retrieval.ports.namespace_generations import NamespaceGenerations
from retrieval.service.ingestion.chunk_graph import ChunkGraph
from retrieval.service.ingestion.consistency import ChunkStores
from retrieval.service.ingestion.document_checks import check_document, check_request
from retrieval.service.ingestion.leases import claim_documents, writer_lease
from retrieval.service.ingestion.library import (
    Deletion,
    DocumentSummary,
    Removal,
    StoredDocument,
    check_source_prefix,
    checked_source,
    doomed_by_sync,
    stored_records,
    under_any,
)
from retrieval.service.ingestion.outcomes import (
    DeleteReport,
    DocumentOutcome,
    Outcome,
    SyncReport,
    deleted_outcome,
    failed,
)
from retrieval.service.ingestion.progress import (
    EMBEDDING_BATCH,
    EmbeddedTally,
    IngestProgress,
    LeaseRenewal,
    Progress,
)
from retrieval.service.ingestion.reconciliation import ReconcileReport, Reconciliation
from retrieval.service.timing import StageClock

log = structlog.get_logger("ingestion")


@dataclass(frozen=True)
class ChunkingPolicy:
    max_words: int = 180
    overlap_words: int = 30


@dataclass
class Prepared:
    """A document cut into chunks, with their vectors when the caller brought them."""

    document: RagDocument
    chunks: list[RagChunk]
    vectors: Matrix | None = None

    @property
    def document_id(self) -> str:
        return self.document.document_id

    @property
    def source(self) -> str | None:
        return self.document.source.uri if self.document.source is not None else None

    @cached_property
    def fingerprint(self) -> str:
        return fingerprint(chunk.chunk_id for chunk in self.chunks)


@dataclass
class Write:
    """One document to write under its pending record."""

    prepared: Prepared
    pending: DocumentRecord

    @property
    def outcome(self) -> Outcome:
        return Outcome.UPDATED if self.pending.previous else Outcome.CREATED


def passages_to_embed(items: Sequence[Prepared]) -> int:
    """Chunks of these documents to embed: those of documents given without vectors."""
    return sum(len(item.chunks) for item in items if item.vectors is None)


class PassageEmbedder(Protocol):
    """What callers bringing their own vectors need: the passage side of the service's model."""

    @property
    def model(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    async def embed_passages(self, texts: Sequence[str]) -> Matrix: ...


class IngestionService:
    """The only writer of chunk texts, vectors, keyword entries and ledger records."""

    def __init__(
        self,
        embedder: Embedder,
        index: VectorIndex,
        keywords: KeywordIndex,
        chunks: ChunkRepository,
        ledger: DocumentLedger,
        generations: NamespaceGenerations,
        allowed_domains: Collection[str],
        default_namespace: str,
        policy: ChunkingPolicy,
        documents_per_write: int = 16,
        embedded_per_write: int = 500,
        lease_wait_s: float = 30.0,
        max_delete_share: float = 0.5,
        lease_renew_s: float = 30.0,
        graph: ChunkGraph | None = None,
    ) -> None:
        self._embedder = embedder
        self._stores = ChunkStores(index, keywords, chunks, graph)
        self._chunks = chunks
        self._ledger = ledger
        self._generations = generations
        self._allowed_domains = frozenset(allowed_domains)
        self._default_namespace = default_namespace
        self._policy = policy
        self._documents_per_write = documents_per_write
        self._embedded_per_write = embedded_per_write
        self._lease_wait_s = lease_wait_s
        self._signature = model_signature(embedder.model, embedder.dimension)
        self._reconciliation = Reconciliation(embedder, self._stores, ledger, lease_wait_s)
        self._deletion = Deletion(self._stores, ledger, lease_wait_s)
        self._max_delete_share = max_delete_share
        self._lease_renew_s = lease_renew_s

    @property
    def model(self) -> str:
        return self._embedder.model

    @property
    def dimension(self) -> int:
        return self._embedder.dimension

    async def embed_passages(self, texts: Sequence[str]) -> Matrix:
        """Passage vectors as ingestion makes them (cache included), for callers that store
        them later with ``ingest_embedded``."""
        return await self._embedder.embed_passages(texts)

    def split(self, document: RagDocument, namespace: str) -> list[RagChunk]:
        pieces = chunk_markdown(
            document.title,
            document.content,
            max_words=self._policy.max_words,
            overlap_words=self._policy.overlap_words,
        )
        return [
            self._chunk(document, namespace, position, piece.content, piece.section, piece.pages)
            for position, piece in enumerate(pieces)
        ]

    def _chunk(
        self,
        document: RagDocument,
        namespace: str,
        position: int,
        text: str,
        section: str = "",
        pages: tuple[int, ...] = (),
    ) -> RagChunk:
        source = document.source
        return RagChunk(
            chunk_id=chunk_id(document, position, text, self._embedder.model, pages),
            document_id=document.document_id,
            namespace=namespace,
            title=document.title,
            domain=document.domain,
            position=position,
            content=text,
            metadata=document.metadata,
            source=source.uri if source is not None else None,
            file_type=source.file_type if source is not None else None,
            section=section,
            pages=pages,
        )

    def check(self, document: RagDocument, namespace: str | None = None) -> None:
        """Raise ``InvalidRequestError`` if ``ingest`` would refuse this document."""
        namespace = check_slug(namespace or self._default_namespace, "namespace")
        check_document(
            document,
            self.split(document, namespace),
            allowed_domains=self._allowed_domains,
            signature=self._signature,
        )

    async def ingest(
        self,
        documents: Sequence[RagDocument],
        namespace: str | None = None,
        on_progress: Progress | None = None,
        *,
        replace: bool = False,
    ) -> list[DocumentOutcome]:
        """Chunk, embed and store documents; unchanged ones cost one lookup and write nothing.

        The request is checked whole first: one bad document raises ``InvalidRequestError``
        naming it and its field, and nothing is written. After that, each document succeeds
        or fails on its own (``Outcome.FAILED`` with the reason). A document whose id is held
        by a document from another source fails with ``DocumentIdClashError`` naming both,
        unless ``replace``.
        """
        namespace = check_slug(namespace or self._default_namespace, "namespace")
        prepared = [Prepared(document, self.split(document, namespace)) for document in documents]
        return await self._ingest_prepared(
            prepared, namespace, on_progress, self._documents_per_write, replace=replace
        )

    async def ingest_embedded(
        self,
        documents: Sequence[RagDocument],
        vectors: Matrix,
        namespace: str | None = None,
        on_progress: Progress | None = None,
    ) -> list[DocumentOutcome]:
        """Store each document whole as one chunk with the passage vector the caller made
        with this service's model (e.g. a benchmark's shipped embeddings)."""
        namespace = check_slug(namespace or self._default_namespace, "namespace")
        if vectors.shape != (len(documents), self._embedder.dimension):
            raise InvalidRequestError(
                f"expected vectors of shape ({len(documents)}, {self._embedder.dimension}), "
                f"got {vectors.shape}",
                field="vectors",
            )
        prepared = [
            Prepared(
                document,
                [self._chunk(document, namespace, 0, document.content)]
                if document.content.strip()
                else [],
                vectors[row : row + 1],
            )
            for row, document in enumerate(documents)
        ]
        return await self._ingest_prepared(
            prepared, namespace, on_progress, self._embedded_per_write
        )

    async def _ingest_prepared(
        self,
        prepared: Sequence[Prepared],
        namespace: str,
        on_progress: Progress | None,
        step: int,
        *,
        replace: bool = False,
    ) -> list[DocumentOutcome]:
        check_request(
            [item.document for item in prepared],
            [item.chunks for item in prepared],
            allowed_domains=self._allowed_domains,
            signature=self._signature,
        )
        progress = IngestProgress.of(on_progress)
        to_embed = passages_to_embed(prepared)
        progress.to_embed(to_embed)
        outcomes: list[DocumentOutcome] = []
        for group in slices(prepared, step):
            tally = EmbeddedTally(progress.embedded)
            settled = await self._ingest_group(group, namespace, replace, tally)
            if spared := passages_to_embed(group) - tally.chunks:
                to_embed -= spared
                progress.to_embed(to_embed)
            outcomes.extend(settled)
            progress.settled(settled)
        return outcomes

    async def _ingest_group(
        self, group: Sequence[Prepared], namespace: str, replace: bool, tally: EmbeddedTally
    ) -> list[DocumentOutcome]:
        clock = StageClock()
        ids = [item.document_id for item in group]
        with clock.stage("lookup"):
            known = await self._ledger.get_many(namespace, ids)
        outcomes = {
            item.document_id: done(item, Outcome.UNCHANGED)
            for item in group
            if item.document_id in known and known[item.document_id].is_current(item.fingerprint)
        }
        todo = [item for item in group if item.document_id not in outcomes]
        if todo:
            with writer_lease() as lease:
                await self._write_group(todo, namespace, outcomes, clock, lease, replace, tally)
        log.info(
            "ingest.group",
            namespace=namespace,
            documents=len(group),
            outcomes={
                kind.value: sum(o.outcome is kind for o in outcomes.values()) for kind in Outcome
            },
            **{f"{stage}_ms": round(ms, 2) for stage, ms in clock.stages.items()},
            total_ms=round(clock.elapsed_ms(), 2),
        )
        return [outcomes[document_id] for document_id in ids]

    async def _write_group(
        self,
        group: Sequence[Prepared],
        namespace: str,
        outcomes: dict[str, DocumentOutcome],
        clock: StageClock,
        lease: Lease,
        replace: bool,
        tally: EmbeddedTally,
    ) -> None:
        with clock.stage("claim"):
            claim = await claim_documents(
                self._ledger,
                namespace,
                [item.document_id for item in group],
                lease,
                self._lease_wait_s,
            )
        for document_id in claim.held:
            busy = DocumentBusyError.of(namespace, document_id)
            outcomes[document_id] = failed(document_id, busy)
        try:
            writes: list[Write] = []
            settled: list[DocumentRecord] = []
            for item in group:
                record = claim.records.get(item.document_id)
                if record is None:
                    continue
                clash = None if replace else record.clash(item.source)
                if clash is not None:
                    outcomes[item.document_id] = failed(item.document_id, clash, item.source)
                elif (
                    record.state is DocumentState.COMMITTED
                    and record.fingerprint == item.fingerprint
                ):
                    settled.append(record)
                    outcomes[item.document_id] = done(item, Outcome.UNCHANGED)
                else:
                    writes.append(Write(item, await self._begin(record, item)))
            if writes:
                outcomes.update(await self._write(writes, namespace, lease, clock, tally))
                settled.extend(w.pending.commit() for w in writes if not is_failed(outcomes, w))
            with clock.stage("remove_stale"):
                await self._remove_stale([r for r in settled if r.stale], lease)
        finally:
            await self._advance(namespace)
            await self._release(namespace, list(claim.records), lease)

    async def _begin(self, record: DocumentRecord, item: Prepared) -> DocumentRecord:
        """The pending record; a document stored without a record (or whose record was lost)
        has its existing chunks counted as stale, so nothing of it is left behind."""
        found = (
            await self._chunks.chunk_ids(item.document_id, record.namespace)
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
        self,
        writes: Sequence[Write],
        namespace: str,
        lease: Lease,
        clock: StageClock,
        tally: EmbeddedTally,
    ) -> dict[str, DocumentOutcome]:
        pending = [write.pending for write in writes]
        try:
            with clock.stage("begin"):
                await self._ledger.save(pending, lease)
            renewal = LeaseRenewal(self._ledger, pending, lease, self._lease_renew_s)
            with clock.stage("embed"):
                vectors = await self._vectors([w.prepared for w in writes], tally, renewal)
            chunks = [chunk for write in writes for chunk in write.prepared.chunks]
            await self._store(chunks, vectors, namespace, clock)
            with clock.stage("commit"):
                await self._ledger.save([record.commit() for record in pending], lease)
        except BaseException as error:
            await self._abandon(pending, namespace, lease)
            if not isinstance(error, RetrievalError):
                raise
            log.error("ingest.failed", namespace=namespace, error=str(error))
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
            batches.append(await self._embedder.embed_passages(batch))
            tally.add(len(batch))
            await renewal()
        return np.concatenate(batches)

    async def _store(
        self, chunks: Sequence[RagChunk], vectors: Matrix, namespace: str, clock: StageClock
    ) -> None:
        with clock.stage("write_texts"):
            await self._chunks.upsert_many(chunks)
        with clock.stage("write_search"):
            await self._stores.add_searchable(chunks, vectors, namespace)

    async def _abandon(
        self, pending: Sequence[DocumentRecord], namespace: str, lease: Lease
    ) -> None:
        """Undo a write that did not commit. The record is made PENDING again first (the
        commit may have landed unseen), so a failure here leaves a state the next run repairs."""
        fresh = sorted({chunk for record in pending for chunk in record.fresh})
        try:
            await self._ledger.save(pending, lease)
            await self._stores.remove(fresh, namespace)
            await self._ledger.save([record.abandon() for record in pending], lease)
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
            await self._stores.remove(stale, namespace)
            await self._ledger.save([record.cleaned() for record in records], lease)
        except RetrievalError as error:
            log.warning(
                "ingest.stale_left", namespace=namespace, chunks=len(stale), error=str(error)
            )

    async def _release(self, namespace: str, document_ids: Sequence[str], lease: Lease) -> None:
        try:
            await self._ledger.release(namespace, document_ids, lease)
        except RetrievalError as error:
            log.warning("ingest.release_failed", namespace=namespace, error=str(error))

    async def delete_document(self, document_id: str, namespace: str | None = None) -> int:
        """Remove a document's vectors, then its texts; returns how many texts it had."""
        report = await self.delete(namespace, [check_slug(document_id, "document_id")])
        if report.busy:
            raise DocumentBusyError.of(report.namespace, document_id)
        return report.chunks

    async def delete(
        self,
        namespace: str | None = None,
        document_ids: Sequence[str] = (),
        *,
        source_prefix: str | None = None,
        dry_run: bool = False,
    ) -> DeleteReport:
        """Delete these documents, and every document whose source is ``source_prefix`` or
        lies below it (segment by segment); ``dry_run`` only reports."""
        namespace = check_slug(namespace or self._default_namespace, "namespace")
        ids = [check_slug(document_id, "document_ids") for document_id in document_ids]
        prefix = check_source_prefix(source_prefix)
        if not ids and prefix is None:
            raise InvalidRequestError(
                "name the documents to delete, or a source prefix", field="document_ids"
            )
        named = set(ids)
        under = under_any([prefix] if prefix is not None else [])
        if prefix is not None:
            records = await stored_records(self._ledger, namespace)
            ids.extend(r.document_id for r in records if under(r) and r.document_id not in named)

        def wanted(record: DocumentRecord) -> bool:
            return record.document_id in named or under(record)

        if dry_run:
            found = await self._ledger.get_many(namespace, ids)
            removal = Removal(deleted=tuple(DocumentSummary.of(r) for r in found.values()))
        else:
            removal = await self._remove(namespace, ids, wanted)
        deleted = {summary.document_id for summary in removal.deleted}
        return DeleteReport(
            namespace=namespace,
            dry_run=dry_run,
            deleted=removal.deleted,
            busy=removal.busy,
            missing=tuple(
                i for i in ids if i in named and i not in deleted and i not in removal.busy
            ),
            chunks=removal.chunks,
        )

    async def _remove(
        self, namespace: str, ids: Sequence[str], wanted: Callable[[DocumentRecord], bool]
    ) -> Removal:
        try:
            return await self._deletion.run(namespace, ids, wanted)
        finally:
            await self._advance(namespace)

    async def documents(
        self, namespace: str | None = None, *, source_prefix: str | None = None
    ) -> list[DocumentSummary]:
        """The namespace's documents by id; those from under ``source_prefix`` if given."""
        namespace = check_slug(namespace or self._default_namespace, "namespace")
        prefix = check_source_prefix(source_prefix)
        records = await stored_records(self._ledger, namespace)
        under = under_any([prefix] if prefix is not None else [])
        return [DocumentSummary.of(r) for r in records if prefix is None or under(r)]

    async def document(self, document_id: str, namespace: str | None = None) -> StoredDocument:
        """One document of the namespace with the texts of its current version, in order;
        ``NotFoundError`` when the namespace holds no version of it."""
        namespace = check_slug(namespace or self._default_namespace, "namespace")
        document_id = check_slug(document_id, "document_id")
        record = (await self._ledger.get_many(namespace, [document_id])).get(document_id)
        if record is None:
            raise NotFoundError(f"document {document_id!r} is not in namespace {namespace!r}")
        texts = await self._chunks.get_many(record.committed, namespace)
        return StoredDocument(
            summary=DocumentSummary.of(record),
            chunks=tuple(sorted(texts.values(), key=lambda chunk: chunk.position)),
        )

    async def sync(
        self,
        documents: Sequence[RagDocument],
        roots: Sequence[str],
        namespace: str | None = None,
        *,
        unreadable: Collection[str] = (),
        dry_run: bool = False,
        replace: bool = False,
        allow_mass_delete: bool = False,
        on_progress: Progress | None = None,
    ) -> SyncReport:
        """Make the namespace hold exactly what ``roots`` hold: ingest ``documents`` (read
        from under the roots, each with its source), then delete the documents whose source
        lies under a root and that ``documents`` no longer include. Documents of a source in
        ``unreadable`` (a file that failed to read) are kept. See
        ``retrieval.service.ingestion.library``.
        """
        namespace = check_slug(namespace or self._default_namespace, "namespace")
        checked = [checked_source(root, "roots") for root in roots]
        inside = under_any(checked)
        if not checked:
            raise InvalidRequestError("a sync needs at least one root", field="roots")
        for document in documents:
            source = document.source.uri if document.source is not None else None
            if not any(is_under(source, root) for root in checked):
                raise InvalidRequestError(
                    f"document {document.document_id!r} has source {source!r}, under no root",
                    field="documents.source",
                )
        records = await stored_records(self._ledger, namespace)
        doomed = doomed_by_sync(records, inside, {d.document_id for d in documents}, unreadable)
        total = len(records)
        if doomed and not allow_mass_delete and len(doomed) > self._max_delete_share * total:
            raise MassDeleteError(namespace, len(doomed), total, self._max_delete_share)
        if dry_run:
            outcomes = await self.plan(documents, namespace, replace=replace)
            removal = Removal(deleted=tuple(DocumentSummary.of(r) for r in doomed))
        else:
            outcomes = await self.ingest(documents, namespace, on_progress, replace=replace)
            removal = await self._remove(namespace, [r.document_id for r in doomed], inside)
        return SyncReport(
            namespace=namespace,
            dry_run=dry_run,
            outcomes=(*outcomes, *(deleted_outcome(s) for s in removal.deleted)),
            busy=removal.busy,
        )

    async def plan(
        self, documents: Sequence[RagDocument], namespace: str | None = None, *, replace: bool
    ) -> list[DocumentOutcome]:
        """What ``ingest`` would do to each document, without writing anything."""
        namespace = check_slug(namespace or self._default_namespace, "namespace")
        prepared = [Prepared(document, self.split(document, namespace)) for document in documents]
        check_request(
            documents,
            [item.chunks for item in prepared],
            allowed_domains=self._allowed_domains,
            signature=self._signature,
        )
        known = await self._ledger.get_many(namespace, [item.document_id for item in prepared])
        return [planned(item, known.get(item.document_id), replace) for item in prepared]

    async def reconcile(self, namespace: str, *, dry_run: bool = False) -> ReconcileReport:
        """Find, and unless ``dry_run`` repair, what a crash or a failure left behind."""
        namespace = check_slug(namespace, "namespace")
        try:
            return await self._reconciliation.run(namespace, dry_run=dry_run)
        finally:
            if not dry_run:
                await self._advance(namespace)

    async def recover(self) -> int:
        """Repair what this host's writers left when they ended without releasing their
        documents (``Reconciliation.recover``); returns how many documents."""
        repaired = await self._reconciliation.recover()
        for namespace in repaired:
            await self._advance(namespace)
        return sum(repaired.values())

    async def delete_namespace(self, namespace: str) -> int:
        """Remove every record, vector, keyword entry and graph record, then every text; returns
        the text count.

        Texts outlive the rest if this is interrupted, and a re-run finishes it."""
        namespace = check_slug(namespace, "namespace")
        try:
            await self._ledger.delete_namespace(namespace)
            await self._stores.index.delete(namespace=namespace, delete_all=True)
            await self._stores.keywords.delete(namespace=namespace, delete_all=True)
            if self._stores.graph is not None:
                await self._stores.graph.store.delete(namespace=namespace, delete_all=True)
            return await self._chunks.delete_namespace(namespace)
        finally:
            await self._advance(namespace)

    async def _advance(self, namespace: str) -> None:
        """Retire every replica's cached results of the namespace: after the stores changed
        (see ``retrieval.service.caching.result_cache``); a failure leaves them to their TTL."""
        try:
            await self._generations.advance(namespace)
        except RetrievalError as error:
            log.warning("ingest.generation_not_advanced", namespace=namespace, error=str(error))


def done(item: Prepared, outcome: Outcome) -> DocumentOutcome:
    return DocumentOutcome(
        document_id=item.document_id, outcome=outcome, chunks=len(item.chunks), source=item.source
    )


def planned(item: Prepared, record: DocumentRecord | None, replace: bool) -> DocumentOutcome:
    if record is None:
        return done(item, Outcome.CREATED)
    clash = None if replace else record.clash(item.source)
    if clash is not None:
        return failed(item.document_id, clash, item.source)
    return done(item, Outcome.UNCHANGED if record.is_current(item.fingerprint) else Outcome.UPDATED)


def is_failed(outcomes: dict[str, DocumentOutcome], write: Write) -> bool:
    return outcomes[write.prepared.document_id].outcome is Outcome.FAILED
