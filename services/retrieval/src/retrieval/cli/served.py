"""A command's requests sent to the ``retrieval serve`` that holds the data directory.

The commands that can be forwarded call an ``ApplicationCalls``: the ``Application`` in
process, or a ``ServedApplication`` that makes each call (``retrieve_query``, ``answer``,
``stream``, ``ingest``, ``sync``, ``delete``, ``documents``, ``collect``, ``validate``) over
gRPC. The server checks each call whole, so a document it refuses is left out and the rest
sent again: one bad file fails alone, as it does in process.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

from retrieval.errors import InvalidRequestError
from retrieval.service.ingestion.outcomes import DocumentOutcome, failed

if TYPE_CHECKING:
    from retrieval.domain.answers import Answer, AnswerEvent
    from retrieval.domain.models import RagDocument, RetrievalQuery, RetrievalResult
    from retrieval.domain.validation import ValidationReport, ValidationRequest
    from retrieval.grpc.client import RetrievalClient
    from retrieval.service.ingestion.library import DocumentSummary
    from retrieval.service.ingestion.outcomes import DeleteReport, SyncReport
    from retrieval.service.ingestion.progress import Progress
    from retrieval.service.stats import CollectionStats
    from retrieval.settings import Settings

T = TypeVar("T")
DOCUMENTS_PER_CALL = 100
NAMED_BY_FIELD = re.compile(r"^documents\[(\d+)\]")
NAMED_BY_REASON = re.compile(r"^document '([^']+)': ")
"""How the service names the document it refuses: by its place in the request
(``documents[3].content``) or by its id (``document 'notes': ...``)."""


class RetrievalCalls(Protocol):
    async def retrieve_query(self, query: RetrievalQuery, /) -> RetrievalResult: ...


class AnswerCalls(Protocol):
    async def answer(self, query: RetrievalQuery, /) -> Answer: ...

    def stream(self, query: RetrievalQuery, /) -> AsyncGenerator[AnswerEvent, None]: ...


class StatsCalls(Protocol):
    async def collect(self) -> CollectionStats: ...


class ValidationCalls(Protocol):
    async def validate(self, request: ValidationRequest, /) -> ValidationReport: ...


class IngestionCalls(Protocol):
    def check(self, document: RagDocument, namespace: str, /) -> None: ...

    async def ingest(
        self,
        documents: Sequence[RagDocument],
        namespace: str,
        on_progress: Progress | None = None,
        *,
        replace: bool = False,
    ) -> list[DocumentOutcome]: ...

    async def sync(
        self,
        documents: Sequence[RagDocument],
        roots: Sequence[str],
        namespace: str,
        *,
        unreadable: set[str],
        dry_run: bool,
        replace: bool,
        allow_mass_delete: bool,
        on_progress: Progress | None = None,
    ) -> SyncReport: ...

    async def delete(
        self,
        namespace: str | None = None,
        document_ids: Sequence[str] = (),
        *,
        source_prefix: str | None = None,
        dry_run: bool = False,
    ) -> DeleteReport: ...

    async def documents(
        self, namespace: str | None = None, *, source_prefix: str | None = None
    ) -> list[DocumentSummary]: ...


class ApplicationCalls(Protocol):
    """What the commands that can be forwarded call: ``Application`` answers in process,
    ``ServedApplication`` over gRPC."""

    @property
    def retrieval(self) -> RetrievalCalls: ...

    @property
    def answers(self) -> AnswerCalls: ...

    @property
    def stats(self) -> StatsCalls: ...

    @property
    def validation(self) -> ValidationCalls: ...

    @property
    def ingestion(self) -> IngestionCalls: ...


def refused_place(error: InvalidRequestError, documents: Sequence[RagDocument]) -> int | None:
    """Where in ``documents`` the one ``error`` refuses is, if it names one."""
    by_field = NAMED_BY_FIELD.match(error.field or "")
    if by_field is not None and int(by_field.group(1)) < len(documents):
        return int(by_field.group(1))
    by_reason = NAMED_BY_REASON.match(error.reason)
    ids = [document.document_id for document in documents]
    if by_reason is not None and by_reason.group(1) in ids:
        return ids.index(by_reason.group(1))
    return None


async def without_refused(
    send: Callable[[list[RagDocument]], Awaitable[T]], documents: Sequence[RagDocument]
) -> tuple[T, list[DocumentOutcome]]:
    """``send(documents)``, leaving out each document the server refuses by name, with a
    failed outcome for each."""
    pending = list(documents)
    refused: list[DocumentOutcome] = []
    while True:
        try:
            return await send(pending), refused
        except InvalidRequestError as error:
            place = refused_place(error, pending)
            if place is None:
                raise
            document = pending.pop(place)
            source = document.source.uri if document.source is not None else None
            refused.append(failed(document.document_id, error, source))


class ServedCalls:
    """The retrieval, answer, stats and validation calls, one attribute each."""

    def __init__(self, client: RetrievalClient) -> None:
        self.retrieve_query = client.retrieve_query
        self.answer = client.answer
        self.stream = client.answer_stream
        self.collect = client.stats
        self.validate = client.validate


class ServedIngestion:
    def __init__(self, client: RetrievalClient) -> None:
        self._client = client
        self.delete = client.delete
        self.documents = client.documents

    def check(self, document: RagDocument, namespace: str) -> None:
        """Nothing: the server checks every call (see ``without_refused``)."""

    async def ingest(
        self,
        documents: Sequence[RagDocument],
        namespace: str,
        on_progress: Progress | None = None,
        *,
        replace: bool = False,
    ) -> list[DocumentOutcome]:
        from retrieval.service.ingestion.progress import IngestProgress

        progress = IngestProgress.of(on_progress)
        outcomes: list[DocumentOutcome] = []
        for start in range(0, len(documents), DOCUMENTS_PER_CALL):
            batch = documents[start : start + DOCUMENTS_PER_CALL]

            async def send(pending: list[RagDocument]) -> list[DocumentOutcome]:
                return await self._client.ingest(pending, namespace, replace=replace)

            written, refused = await without_refused(send, batch)
            progress.settled([*refused, *written])
            outcomes += [*refused, *written]
        return outcomes

    async def sync(
        self,
        documents: Sequence[RagDocument],
        roots: Sequence[str],
        namespace: str,
        *,
        unreadable: set[str],
        dry_run: bool,
        replace: bool,
        allow_mass_delete: bool,
        on_progress: Progress | None = None,
    ) -> SyncReport:
        from retrieval.service.ingestion.file_intake import refused_sources
        from retrieval.service.ingestion.progress import IngestProgress

        async def send(pending: list[RagDocument]) -> SyncReport:
            return await self._client.sync(
                pending,
                roots,
                namespace,
                unreadable=unreadable | refused_sources(documents, pending),
                dry_run=dry_run,
                replace=replace,
                allow_mass_delete=allow_mass_delete,
            )

        report, refused = await without_refused(send, documents)
        IngestProgress.of(on_progress).settled(report.outcomes)
        return report.model_copy(update={"outcomes": (*refused, *report.outcomes)})


class ServedApplication:
    """What the forwarded commands call, answered by the server ``client`` reaches."""

    def __init__(self, client: RetrievalClient, settings: Settings) -> None:
        calls = ServedCalls(client)
        self.settings = settings
        self.retrieval = self.answers = self.stats = self.validation = calls
        self.ingestion = ServedIngestion(client)
