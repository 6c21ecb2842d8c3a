"""``DocumentIntake`` over a server: the local-files use case run against ``retrieval serve``.

Each call asks the server for refusals as outcomes (``refused_as_outcomes``): a document the
server's checks refuse comes back as a ``FAILED`` outcome of its own and the others are
written, in one request. An ingest is sent ``DOCUMENTS_PER_CALL`` documents a call; a sync in
one call, as the server needs every document of the roots at once.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from retrieval.batching import slices
from retrieval.service.ingestion.outcomes import DocumentOutcome, SyncReport, accepted
from retrieval.service.ingestion.progress import IngestProgress, Progress

if TYPE_CHECKING:
    from retrieval.grpc.service_calls import ServiceCalls
    from retrieval.service.ingestion.local_files import LocalFiles
    from retrieval.service.ingestion.requests import IngestRequest, SyncRequest

DOCUMENTS_PER_CALL = 100


class RemoteIntake:
    """Writes through ``client``, each document the server refuses a ``FAILED`` outcome."""

    def __init__(self, client: ServiceCalls, timeout: float | None = None) -> None:
        self._client = client
        self._timeout = timeout

    def within(self, timeout: float | None) -> RemoteIntake:
        return RemoteIntake(self._client, timeout)

    async def ingest(
        self, request: IngestRequest, on_progress: Progress | None
    ) -> list[DocumentOutcome]:
        progress = IngestProgress.of(on_progress)
        outcomes: list[DocumentOutcome] = []
        for batch in slices(request.documents, DOCUMENTS_PER_CALL):
            answered = await self._client.ingest_documents(
                batch,
                namespace=request.namespace,
                replace=request.replace,
                refused_as_outcomes=True,
                timeout=self._timeout,
            )
            progress.settled(accepted(answered))
            outcomes += answered
        return outcomes

    async def sync(self, request: SyncRequest, on_progress: Progress | None) -> SyncReport:
        report = await self._client.sync_documents(
            replace(request, refused_as_outcomes=True), timeout=self._timeout
        )
        IngestProgress.of(on_progress).settled(accepted(report.outcomes))
        return report


def remote_local_files(client: ServiceCalls) -> LocalFiles:
    """The local-files use case writing through ``client``'s server."""
    from retrieval.adapters.files.sync_scope import sync_scope
    from retrieval.service.ingestion.local_files import LocalFiles

    return LocalFiles(RemoteIntake(client), sync_scope)
