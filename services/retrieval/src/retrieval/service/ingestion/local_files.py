"""Local files and folders into a namespace: ``retrieval ingest`` and ``sync``,
``retrieval.connect()`` and the gRPC client's ``ingest`` and ``sync`` all run this use case.

The door reads the files (``retrieval.adapters.files``) and hands what it read over, in one
request that asks for refusals as outcomes: a document the checks refuse fails by itself, a
failure of the report (its source, else its id, and why) of which nothing is written, and the
others are written. A sync keeps what the sources of failed files and refused documents held
before. Where the documents are written is a ``DocumentIntake``: this process's services
(``ServiceIntake``) or a server's (``retrieval.grpc.remote_intake``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from pydantic import Field

from retrieval.deadlines import answered_within
from retrieval.domain.models import Frozen, RagDocument, given_namespace
from retrieval.errors import InvalidRequestError
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.ingestion.outcomes import DocumentOutcome, SyncReport, accepted
from retrieval.service.ingestion.progress import Progress
from retrieval.service.ingestion.requests import IngestRequest, SyncRequest
from retrieval.service.ingestion.sync import LibrarySync


class ReadFailure(Protocol):
    """A file, or one entry of a collection, that could not be read."""

    @property
    def source(self) -> str: ...

    @property
    def reason(self) -> str: ...

    @property
    def field(self) -> str | None: ...


class FilesRead(Protocol):
    """What a set of files and folders held."""

    @property
    def documents(self) -> Sequence[RagDocument]: ...

    @property
    def failures(self) -> Sequence[ReadFailure]: ...

    @property
    def skipped(self) -> Sequence[str]: ...

    @property
    def files(self) -> int: ...


class SyncRoots(Protocol):
    """The roots a sync of paths mirrors, and the sources it keeps because they failed."""

    @property
    def roots(self) -> Sequence[str]: ...

    @property
    def unreadable(self) -> Collection[str]: ...


SyncScope = Callable[[Sequence[Path], Sequence[ReadFailure]], SyncRoots]
"""The roots and unreadable sources of the paths given, from what failed to read."""


class DocumentIntake(Protocol):
    """Writes documents into a namespace (None: the default of the services written to), with
    each document the checks refuse returned as a ``FAILED`` outcome of its own
    (``DocumentOutcome.refused``), the others written; a sync keeps what the sources of
    refused documents held."""

    async def ingest(
        self, request: IngestRequest, on_progress: Progress | None
    ) -> list[DocumentOutcome]: ...

    async def sync(self, request: SyncRequest, on_progress: Progress | None) -> SyncReport: ...

    def within(self, timeout: float | None) -> DocumentIntake:
        """This intake with each write bounded by ``timeout`` seconds (None: its default)."""
        ...


class SourceFailure(Frozen):
    """A file, an entry of a collection, or a document, that failed: nothing of it was
    written."""

    source: str = Field(description="The file (with [n] for an entry), else the document id.")
    reason: str = Field(description="What is wrong with it.")
    field: str | None = Field(default=None, description="The document field at fault, if one.")

    @classmethod
    def read(cls, failure: ReadFailure) -> SourceFailure:
        return cls(source=failure.source, reason=failure.reason, field=failure.field)

    @classmethod
    def refused(cls, outcome: DocumentOutcome) -> SourceFailure:
        return cls(
            source=outcome.source or outcome.document_id,
            reason=outcome.error or "",
            field=outcome.field,
        )

    def __str__(self) -> str:
        return f"{self.source}: {self.reason}"


class IngestReport(Frozen):
    """What an ingestion of files, folders and documents did."""

    namespace: str | None = Field(
        description="The namespace written; None for the default of the services written to."
    )
    outcomes: tuple[DocumentOutcome, ...] = Field(description="One per document written.")
    failures: tuple[SourceFailure, ...] = Field(
        description="Files or entries that could not be read, and documents refused (their "
        "source, else their id): nothing of them was written."
    )
    skipped: tuple[str, ...] = Field(description="Files in folders of an unsupported type.")
    files: int = Field(ge=0, description="Files found to read, the failed ones included.")


class PathSync(Frozen):
    """What a sync of local files and folders did."""

    report: SyncReport = Field(description="The service's report of the sync.")
    failures: tuple[SourceFailure, ...] = Field(
        description="Files or entries that could not be read, and documents refused: what "
        "their sources held before was kept."
    )


class ServiceIntake:
    """This process's writer and sync, asked for refusals as outcomes."""

    def __init__(
        self, writer: IngestionService, sync: LibrarySync, timeout: float | None = None
    ) -> None:
        self._writer = writer
        self._sync = sync
        self._timeout = timeout

    def within(self, timeout: float | None) -> ServiceIntake:
        return ServiceIntake(self._writer, self._sync, timeout)

    async def ingest(
        self, request: IngestRequest, on_progress: Progress | None
    ) -> list[DocumentOutcome]:
        async with answered_within(self._timeout, "ingest"):
            return await self._writer.ingest(
                request.documents,
                request.namespace,
                on_progress,
                replace=request.replace,
                refused_as_outcomes=True,
            )

    async def sync(self, request: SyncRequest, on_progress: Progress | None) -> SyncReport:
        async with answered_within(self._timeout, "sync"):
            return await self._sync.sync(replace(request, refused_as_outcomes=True), on_progress)


class LocalFiles:
    """Files read by a door, written through ``intake``, told in one report."""

    def __init__(self, intake: DocumentIntake, scope: SyncScope) -> None:
        self._intake = intake
        self._scope = scope

    def within(self, timeout: float | None) -> LocalFiles:
        """This use case with each write bounded by ``timeout`` seconds (None: its default)."""
        return LocalFiles(self._intake.within(timeout), self._scope)

    async def ingest(
        self,
        files: FilesRead,
        namespace: str | None,
        *,
        documents: Sequence[RagDocument] = (),
        replace: bool = False,
        on_progress: Progress | None = None,
    ) -> IngestReport:
        """Write the documents read and ``documents``; an unchanged one writes nothing.
        ``namespace`` None is the default one; an empty or blank one is refused."""
        target = given_namespace(namespace)
        request = IngestRequest([*files.documents, *documents], target, replace)
        outcomes = await self._intake.ingest(request, on_progress)
        return IngestReport(
            namespace=target,
            outcomes=accepted(outcomes),
            failures=failures_of(files, outcomes),
            skipped=tuple(files.skipped),
            files=files.files,
        )

    async def sync(
        self,
        paths: Sequence[Path],
        files: FilesRead,
        namespace: str | None,
        *,
        dry_run: bool = False,
        replace: bool = False,
        allow_mass_delete: bool = False,
        on_progress: Progress | None = None,
    ) -> PathSync:
        """Make the namespace hold what ``paths`` hold: each path that exists is a root.
        ``namespace`` None is the default one; an empty or blank one is refused."""
        target = given_namespace(namespace)
        scope = self._scope(paths, files.failures)
        if not scope.roots:
            raise InvalidRequestError(f"none of {[str(p) for p in paths]} exists", field="paths")
        request = SyncRequest(
            files.documents,
            scope.roots,
            target,
            unreadable=scope.unreadable,
            dry_run=dry_run,
            replace=replace,
            allow_mass_delete=allow_mass_delete,
        )
        report = await self._intake.sync(request, on_progress)
        return PathSync(
            report=report.model_copy(update={"outcomes": accepted(report.outcomes)}),
            failures=failures_of(files, report.outcomes),
        )


def failures_of(files: FilesRead, outcomes: Sequence[DocumentOutcome]) -> tuple[SourceFailure, ...]:
    """What failed to read, then the documents refused."""
    return (
        *(SourceFailure.read(failure) for failure in files.failures),
        *(SourceFailure.refused(o) for o in outcomes if o.refused),
    )
