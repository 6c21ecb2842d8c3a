"""A namespace's documents: read one, list them, delete some, or drop the namespace."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from retrieval.domain.ledger import DocumentRecord
from retrieval.domain.models import check_slug, namespace_or_default
from retrieval.errors import DocumentBusyError, InvalidRequestError, NotFoundError
from retrieval.ports.document_ledger import DocumentLedger
from retrieval.ports.namespace_generations import NamespaceGenerations
from retrieval.service.ingestion.consistency import ChunkStores
from retrieval.service.ingestion.deletion import Deletion
from retrieval.service.ingestion.library import (
    DocumentSummary,
    Removal,
    StoredDocument,
    check_source_prefix,
    stored_records,
    under_any,
)
from retrieval.service.ingestion.namespaces import advance_generation
from retrieval.service.ingestion.outcomes import DeleteReport
from retrieval.service.ingestion.requests import DeleteRequest


@dataclass(frozen=True, eq=False)
class Library:
    """The documents of each namespace, as their ledger records and chunk texts hold them."""

    stores: ChunkStores
    ledger: DocumentLedger
    generations: NamespaceGenerations
    default_namespace: str
    lease_wait_s: float

    async def documents(
        self, namespace: str | None = None, *, source_prefix: str | None = None
    ) -> list[DocumentSummary]:
        """The namespace's documents by id; those from under ``source_prefix`` if given."""
        namespace = namespace_or_default(namespace, self.default_namespace)
        prefix = check_source_prefix(source_prefix)
        records = await stored_records(self.ledger, namespace)
        under = under_any([prefix] if prefix is not None else [])
        return [DocumentSummary.of(r) for r in records if prefix is None or under(r)]

    async def document(self, document_id: str, namespace: str | None = None) -> StoredDocument:
        """One document of the namespace with the texts of its current version, in order;
        ``NotFoundError`` when the namespace holds no version of it."""
        namespace = namespace_or_default(namespace, self.default_namespace)
        document_id = check_slug(document_id, "document_id")
        record = (await self.ledger.get_many(namespace, [document_id])).get(document_id)
        if record is None:
            raise NotFoundError(f"document {document_id!r} is not in namespace {namespace!r}")
        texts = await self.stores.texts.get_many(record.committed, namespace)
        return StoredDocument(
            summary=DocumentSummary.of(record),
            chunks=tuple(sorted(texts.values(), key=lambda chunk: chunk.position)),
        )

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
        return await self.apply(DeleteRequest(namespace, document_ids, source_prefix, dry_run))

    async def apply(self, request: DeleteRequest) -> DeleteReport:
        """``delete``, its arguments in one value, as the doors hand them on."""
        namespace = namespace_or_default(request.namespace, self.default_namespace)
        ids = [check_slug(document_id, "document_ids") for document_id in request.document_ids]
        prefix = check_source_prefix(request.source_prefix)
        dry_run = request.dry_run
        if not ids and prefix is None:
            raise InvalidRequestError(
                "name the documents to delete, or a source prefix", field="document_ids"
            )
        named = set(ids)
        under = under_any([prefix] if prefix is not None else [])
        if prefix is not None:
            records = await stored_records(self.ledger, namespace)
            ids.extend(r.document_id for r in records if under(r) and r.document_id not in named)

        def wanted(record: DocumentRecord) -> bool:
            return record.document_id in named or under(record)

        if dry_run:
            found = await self.ledger.get_many(namespace, ids)
            removal = Removal(deleted=tuple(DocumentSummary.of(r) for r in found.values()))
        else:
            removal = await self.remove(namespace, ids, wanted)
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

    async def remove(
        self, namespace: str, ids: Sequence[str], wanted: Callable[[DocumentRecord], bool]
    ) -> Removal:
        """Delete the documents of ``ids`` that are still ``wanted`` once claimed."""
        try:
            return await Deletion(self.stores, self.ledger, self.lease_wait_s).run(
                namespace, ids, wanted
            )
        finally:
            await advance_generation(self.generations, namespace)

    async def delete_namespace(self, namespace: str) -> int:
        """Remove every record, vector, keyword entry and graph record, then every text; returns
        the text count.

        Texts outlive the rest if this is interrupted, and a re-run finishes it."""
        namespace = check_slug(namespace, "namespace")
        stores = self.stores
        try:
            await self.ledger.delete_namespace(namespace)
            await stores.index.delete(namespace=namespace, delete_all=True)
            await stores.keywords.delete(namespace=namespace, delete_all=True)
            if stores.graph is not None:
                await stores.graph.store.delete(namespace=namespace, delete_all=True)
            return await stores.texts.delete_namespace(namespace)
        finally:
            await advance_generation(self.generations, namespace)
