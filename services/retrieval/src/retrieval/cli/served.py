"""A command's requests sent to the ``retrieval serve`` that holds the data directory.

The commands that can be forwarded call an ``ApplicationCalls``: the ``Application`` in
process, or a ``ServedApplication`` whose services (``retrieval``, ``answers``, ``stats``,
``validation``, ``library``, ``local_files``, ``backups``) are made over gRPC. Local files
go through the same use case as in process (``retrieval.service.ingestion.local_files``),
written by the server (``retrieval.grpc.remote_intake``): one bad file fails alone, as it
does in process.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from functools import cached_property
from typing import TYPE_CHECKING, Protocol

from retrieval.errors import BackendNotConfiguredError

if TYPE_CHECKING:
    from pathlib import Path

    from retrieval.domain.answers import Answer, AnswerEvent
    from retrieval.domain.models import RetrievalQuery, RetrievalResult
    from retrieval.domain.validation import ValidationRequest
    from retrieval.domain.validation_report import ValidationReport
    from retrieval.grpc.client import RetrievalClient
    from retrieval.grpc.serving_record import ServingRecord
    from retrieval.service.backup.backups import BackupReport, RestoreReport
    from retrieval.service.ingestion.library import DocumentSummary
    from retrieval.service.ingestion.local_files import LocalFiles
    from retrieval.service.ingestion.outcomes import DeleteReport
    from retrieval.service.ingestion.requests import DeleteRequest
    from retrieval.service.stats import CollectionStats
    from retrieval.settings import Settings


class RetrievalCalls(Protocol):
    async def retrieve_query(self, query: RetrievalQuery, /) -> RetrievalResult: ...


class AnswerCalls(Protocol):
    async def answer(self, query: RetrievalQuery, /) -> Answer: ...

    def stream(self, query: RetrievalQuery, /) -> AsyncGenerator[AnswerEvent, None]: ...


class StatsCalls(Protocol):
    async def collect(self) -> CollectionStats: ...


class ValidationCalls(Protocol):
    async def validate(self, request: ValidationRequest, /) -> ValidationReport: ...


class LibraryCalls(Protocol):
    async def apply(self, request: DeleteRequest, /) -> DeleteReport: ...

    async def documents(
        self, namespace: str | None = None, *, source_prefix: str | None = None
    ) -> list[DocumentSummary]: ...


class BackupCalls(Protocol):
    async def backup(self, namespace: str, file: Path, /) -> BackupReport: ...

    async def restore(
        self, file: Path, namespace: str | None = None, /, *, replace: bool = False
    ) -> RestoreReport: ...


class ApplicationCalls(Protocol):
    """What the commands that can be forwarded call: ``Application`` answers in process,
    ``ServedApplication`` over gRPC."""

    retrieval: RetrievalCalls
    answers: AnswerCalls
    stats: StatsCalls
    validation: ValidationCalls
    library: LibraryCalls
    local_files: LocalFiles
    backups: BackupCalls


class ServedCalls:
    """The retrieval, answer, stats and validation calls, one attribute each, and the
    library's, in the services' argument order."""

    def __init__(self, client: RetrievalClient) -> None:
        self._client = client
        self.retrieve_query = client.retrieve_query
        self.answer = client.answer
        self.stream = client.answer_stream
        self.collect = client.stats
        self.validate = client.validate

    async def apply(self, request: DeleteRequest) -> DeleteReport:
        return await self._client.delete(
            request.document_ids,
            namespace=request.namespace,
            source_prefix=request.source_prefix,
            dry_run=request.dry_run,
        )

    async def documents(
        self, namespace: str | None = None, *, source_prefix: str | None = None
    ) -> list[DocumentSummary]:
        return await self._client.documents(namespace=namespace, source_prefix=source_prefix)


class ServedApplication:
    """What the forwarded commands call, answered by the server ``client`` reaches."""

    def __init__(self, client: RetrievalClient, settings: Settings) -> None:
        calls = ServedCalls(client)
        self.settings = settings
        self.retrieval = self.answers = self.stats = self.validation = self.library = calls
        self.backups = client
        self._client = client

    @cached_property
    def local_files(self) -> LocalFiles:
        """Made when a command reads files: what it imports (the ingestion service, numpy)
        would double the time a forwarded query takes."""
        from retrieval.grpc.remote_intake import remote_local_files

        return remote_local_files(self._client)


def lacking_on_the_server(
    error: BackendNotConfiguredError, record: ServingRecord
) -> BackendNotConfiguredError:
    """``error`` as the running server reported it: the server lacks the setting, not the
    shell the command runs in."""
    return BackendNotConfiguredError(
        f"the server at {record.address} (retrieval serve, pid {record.pid}) answered: {error}; "
        "it reads its settings where it was started: set them there and restart it"
    )
