"""Documents read from local files on their way into a namespace, as ``retrieval ingest``,
``retrieval sync`` and ``retrieval.connect()`` take them: each document is checked alone, so
that a bad one fails by itself."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from pydantic import Field

from retrieval.adapters.files.document_files import FileFailure
from retrieval.domain.models import Frozen, RagDocument
from retrieval.errors import InvalidRequestError
from retrieval.service.ingestion.outcomes import DocumentOutcome, SyncReport

if TYPE_CHECKING:
    from retrieval.service.ingestion.ingestion_service import IngestionService


def check_each(
    ingestion: IngestionService, documents: Sequence[RagDocument], namespace: str
) -> tuple[list[RagDocument], list[FileFailure]]:
    """The documents the service accepts, and a failure for each other one (its source, else
    its id, and why), so that one bad document fails alone rather than the whole request."""
    accepted: list[RagDocument] = []
    refused: list[FileFailure] = []
    for document in documents:
        try:
            ingestion.check(document, namespace)
        except InvalidRequestError as error:
            source = document.source.uri if document.source else document.document_id
            refused.append(FileFailure.of(error, source))
        else:
            accepted.append(document)
    return accepted, refused


def refused_sources(documents: Iterable[RagDocument], accepted: Iterable[RagDocument]) -> set[str]:
    """The sources of the documents not accepted: a sync keeps what they hold."""
    kept = {document.document_id for document in accepted}
    return {d.source.uri for d in documents if d.document_id not in kept and d.source}


class IngestReport(Frozen):
    """What an ingestion of files, folders and documents did."""

    namespace: str = Field(description="The namespace written.")
    outcomes: tuple[DocumentOutcome, ...] = Field(description="One per document written.")
    failures: tuple[FileFailure, ...] = Field(
        description="Files or entries that could not be read, and documents refused (their "
        "source, else their id): nothing of them was written."
    )
    skipped: tuple[str, ...] = Field(description="Files in folders of an unsupported type.")
    files: int = Field(ge=0, description="Files found to read, the failed ones included.")


class PathSync(Frozen):
    """What a sync of local files and folders did."""

    report: SyncReport = Field(description="The service's report of the sync.")
    failures: tuple[FileFailure, ...] = Field(
        description="Files or entries that could not be read, and documents refused: what "
        "their sources held before was kept."
    )
