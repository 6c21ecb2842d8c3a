"""Backup and restore of a namespace (docs/operations.md).

A backup writes each document's committed version (ledger record, chunk texts, vectors) to
one file through a ``BackupArchive``. A restore reads the whole file once first, checking it
and every document, then reads it again to write every document through the writer
(``IngestionService.write``), under its ledger record and lease like any ingest: a document
is visible once all its parts are written, a restore cut short leaves each document whole or
repaired by the next start, and running it again writes only what is missing (the others are
UNCHANGED). The writer makes keyword entries from the texts; vectors are kept when the
stack's model is the backup's, and made again when it is not; graph records are made from
the file's extractions when the stack's graph records are of the backup's version, and
extracted again when they are not.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from contextlib import aclosing
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path

from pydantic import Field

from retrieval.domain.backup import BackedUpDocument, BackupHeader
from retrieval.domain.frozen import Frozen
from retrieval.domain.models import check_slug
from retrieval.errors import NamespaceNotEmptyError, NotFoundError
from retrieval.ports.backup_archive import BackupArchive
from retrieval.ports.document_ledger import DocumentLedger
from retrieval.service.backup.restoring import prepared_again, read_ahead
from retrieval.service.backup.snapshot import NamespaceSnapshot
from retrieval.service.ingestion.chunking import Prepared
from retrieval.service.ingestion.consistency import ChunkStores
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.ingestion.library_service import Library
from retrieval.service.ingestion.outcomes import Outcome

DOCUMENTS_PER_READ = 256
"""Documents read from the file between two writes when they are embedded again (the writer
groups them as an ingest does)."""
CHUNKS_PER_GROUP = 500
"""Chunks of one group write when their vectors are kept (nothing to embed): as many whole
documents as fit, one at least, under one lease and one ledger write of each kind; the
writer's own bound for vectors brought by the caller (``embedded_per_write``)."""


class BackupReport(Frozen):
    """What a backup wrote."""

    namespace: str = Field(description="The namespace backed up.")
    file: str = Field(description="The backup file.")
    model: str = Field(description="The model its vectors were made with.")
    dimension: int = Field(description="Their dimension.")
    documents: int = Field(ge=0, description="Documents written.")
    chunks: int = Field(ge=0, description="Chunks written.")
    without_vectors: tuple[str, ...] = Field(
        default=(), description="Documents the index held no vectors for: embedded on restore."
    )
    left_out: tuple[str, ...] = Field(
        default=(), description="Documents that lost chunk texts: `retrieval reconcile`."
    )


class RestoreReport(Frozen):
    """What a restore wrote."""

    namespace: str = Field(description="The namespace restored into.")
    file: str = Field(description="The backup file.")
    documents: int = Field(ge=0, description="Documents in the file.")
    chunks: int = Field(ge=0, description="Chunks in the file.")
    embedded_again: bool = Field(
        description="The stack's model is not the backup's: every chunk was embedded again."
    )
    restored: int = Field(ge=0, description="Documents written.")
    unchanged: int = Field(
        ge=0, description="Documents already there at the backup's version (a resumed restore)."
    )
    failed: dict[str, str] = Field(
        default_factory=dict, description="Documents not written, with why; run it again."
    )
    deleted: int = Field(
        default=0, ge=0, description="With replace: documents removed that the backup lacks."
    )


@dataclass(frozen=True, eq=False)
class Backups:
    """Backs namespaces up to files and restores them, on whatever stores are wired."""

    writer: IngestionService
    stores: ChunkStores
    ledger: DocumentLedger
    library: Library
    archive: BackupArchive

    async def backup(self, namespace: str, path: Path) -> BackupReport:
        """Write the namespace's committed documents to ``path``; ``NotFoundError`` (and no
        file) when it holds none."""
        namespace = check_slug(namespace, "namespace")
        header = BackupHeader(
            namespace=namespace,
            model=self.writer.model,
            dimension=self.writer.dimension,
            graph_version=self._graph_version,
            created_at=datetime.now(UTC),
        )
        snapshot = NamespaceSnapshot(self.stores, self.ledger, namespace)
        documents = chunks = 0
        with self.archive.create(path, header) as file:
            async for document in snapshot.documents():
                file.add(document)
                documents += 1
                chunks += len(document.chunks)
            if not documents:
                raise NotFoundError(f"namespace {namespace!r} holds no documents")
        return BackupReport(
            namespace=namespace,
            file=str(path),
            model=header.model,
            dimension=header.dimension,
            documents=documents,
            chunks=chunks,
            without_vectors=tuple(snapshot.without_vectors),
            left_out=tuple(snapshot.left_out),
        )

    async def restore(
        self, path: Path, namespace: str | None = None, *, replace: bool = False
    ) -> RestoreReport:
        """Bring a backup back into ``namespace`` (default: the one it was taken of).

        One read of the file checks it whole (``BackupFileError``) and every document against
        this stack (``InvalidRequestError``), then the namespace: one holding documents the
        backup lacks, or other versions of its documents, is refused
        (``NamespaceNotEmptyError``) unless ``replace``, which makes it hold exactly the
        backup's documents. Only then is anything written."""
        reading = self.archive.entries(path)
        header = next(reading)
        assert isinstance(header, BackupHeader)
        target = check_slug(namespace or header.namespace, "namespace")
        same_model = (header.model, header.dimension) == (
            self.writer.model,
            self.writer.dimension,
        )
        dimension = header.dimension if same_model else None
        graph_version = self._graph_version
        same_graph = graph_version is not None and header.graph_version == graph_version

        def prepared(entries: Iterator[BackupHeader | BackedUpDocument]) -> Iterator[Prepared]:
            for entry in entries:
                if isinstance(entry, BackedUpDocument):
                    yield prepared_again(
                        entry,
                        target,
                        self.writer.model,
                        dimension,
                        graph_version if same_graph else None,
                    )

        expected: dict[str, str] = {}
        documents = chunks = 0
        for item in prepared(reading):
            refused = self.writer.refusal(item)
            if refused is not None:
                raise refused
            expected[item.document_id] = item.fingerprint
            documents += 1
            chunks += len(item.chunks)
        others = await self._others(target, expected)
        if others and not replace:
            raise NamespaceNotEmptyError(target, others)

        outcomes = []
        written = prepared(self.archive.entries(path))
        read = groups(written) if same_model else batches(written)
        async with aclosing(read_ahead(read)) as ahead:
            async for batch in ahead:
                step = len(batch) if same_model else None
                outcomes += await self.writer.write(batch, target, replace=replace, step=step)
        deleted = 0
        if extra := [document_id for document_id in others if document_id not in expected]:
            deleted = len((await self.library.delete(target, extra)).deleted)
        return RestoreReport(
            namespace=target,
            file=str(path),
            documents=documents,
            chunks=chunks,
            embedded_again=not same_model,
            restored=sum(o.outcome in (Outcome.CREATED, Outcome.UPDATED) for o in outcomes),
            unchanged=sum(o.outcome is Outcome.UNCHANGED for o in outcomes),
            failed={o.document_id: o.error or "" for o in outcomes if o.outcome is Outcome.FAILED},
            deleted=deleted,
        )

    @property
    def _graph_version(self) -> str | None:
        """The version of the graph records this stack writes; None when it keeps none."""
        return None if self.stores.graph is None else self.stores.graph.version

    async def _others(self, namespace: str, expected: dict[str, str]) -> list[str]:
        """The documents of ``namespace`` other than the backup's at its version (written, or
        being written by a restore cut short)."""
        return [
            record.document_id
            async for page in self.ledger.list_records(namespace)
            for record in page
            if record.state is not None and expected.get(record.document_id) != record.fingerprint
        ]


def groups(documents: Iterator[Prepared]) -> Generator[list[Prepared], None, None]:
    """The documents in groups of up to ``CHUNKS_PER_GROUP`` chunks (a longer document
    alone)."""
    group: list[Prepared] = []
    chunks = 0
    for document in documents:
        if group and chunks + len(document.chunks) > CHUNKS_PER_GROUP:
            yield group
            group, chunks = [], 0
        group.append(document)
        chunks += len(document.chunks)
    if group:
        yield group


def batches(documents: Iterator[Prepared]) -> Generator[list[Prepared], None, None]:
    while batch := list(islice(documents, DOCUMENTS_PER_READ)):
        yield batch
