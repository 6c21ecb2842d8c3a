"""``DocumentIntake`` over a server: the local-files use case run against ``retrieval serve``.

The server checks each call whole and refuses it with ``InvalidRequestError`` when one
document is bad. A refused call is split in halves, and the halves again, down to the
documents the server refuses alone; a call of no documents first tells a refusal of the
call itself (a bad namespace or root) from one of its documents. An ingest is split by
writing the halves (a refused call writes nothing); a sync by dry runs of them, before the
one real sync of the documents accepted.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import TYPE_CHECKING, TypeVar

from retrieval.batching import slices
from retrieval.domain.models import RagDocument
from retrieval.errors import InvalidRequestError
from retrieval.service.ingestion.local_files import Refused, refused_sources
from retrieval.service.ingestion.outcomes import DocumentOutcome, SyncReport
from retrieval.service.ingestion.progress import IngestProgress, Progress

if TYPE_CHECKING:
    from retrieval.grpc.client import RetrievalClient

DOCUMENTS_PER_CALL = 100

T = TypeVar("T")
Send = Callable[[Sequence[RagDocument]], Awaitable[list[T]]]


async def halved(send: Send[T], documents: Sequence[RagDocument]) -> tuple[list[T], list[Refused]]:
    """What ``send`` returns for the documents it accepts, and those it refuses alone."""
    try:
        return await send(documents), []
    except InvalidRequestError as error:
        if len(documents) == 1:
            return [], [(documents[0], error)]
    middle = len(documents) // 2
    first, first_refused = await halved(send, documents[:middle])
    second, second_refused = await halved(send, documents[middle:])
    return [*first, *second], [*first_refused, *second_refused]


async def each_apart(
    send: Send[T], documents: Sequence[RagDocument]
) -> tuple[list[T], list[Refused]]:
    """``send(documents)``; when refused, ``halved`` once an empty call is accepted."""
    try:
        return await send(documents), []
    except InvalidRequestError:
        await send([])
    return await halved(send, documents)


class RemoteIntake:
    """Writes through ``client``, each document the server refuses set aside."""

    def __init__(self, client: RetrievalClient, timeout: float | None = None) -> None:
        self._client = client
        self._timeout = timeout

    async def ingest_each(
        self,
        documents: Sequence[RagDocument],
        namespace: str,
        on_progress: Progress | None,
        *,
        replace: bool,
    ) -> tuple[list[DocumentOutcome], list[Refused]]:
        progress = IngestProgress.of(on_progress)

        async def send(batch: Sequence[RagDocument]) -> list[DocumentOutcome]:
            return await self._client.ingest(
                batch, namespace, replace=replace, timeout=self._timeout
            )

        outcomes: list[DocumentOutcome] = []
        refused: list[Refused] = []
        for batch in slices(documents, DOCUMENTS_PER_CALL):
            written, refusals = await each_apart(send, batch)
            progress.settled(written)
            outcomes += written
            refused += refusals
        return outcomes, refused

    async def sync_each(
        self,
        documents: Sequence[RagDocument],
        roots: Sequence[str],
        namespace: str,
        *,
        unreadable: Collection[str],
        dry_run: bool,
        replace: bool,
        allow_mass_delete: bool,
        on_progress: Progress | None,
    ) -> tuple[SyncReport, list[Refused]]:
        async def check(batch: Sequence[RagDocument]) -> list[SyncReport]:
            report = await self._client.sync(
                batch, roots, namespace, unreadable=unreadable, dry_run=True, replace=replace,
                allow_mass_delete=True, timeout=self._timeout,
            )  # fmt: skip
            return [report]

        async def send(batch: Sequence[RagDocument], refused: Sequence[Refused]) -> SyncReport:
            return await self._client.sync(
                batch,
                roots,
                namespace,
                unreadable={*unreadable, *refused_sources(refused)},
                dry_run=dry_run,
                replace=replace,
                allow_mass_delete=allow_mass_delete,
                timeout=self._timeout,
            )

        try:
            report, refused = await send(documents, []), []
        except InvalidRequestError:
            _, refused = await each_apart(check, documents)
            if not refused:
                raise
            kept = {id(document) for document, _ in refused}
            report = await send([d for d in documents if id(d) not in kept], refused)
        IngestProgress.of(on_progress).settled(report.outcomes)
        return report, refused
