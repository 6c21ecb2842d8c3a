"""The arguments of an ingest, a sync and a delete, one value each, as every door hands them on.

A door (the Python API, the gRPC client and server, the command line) fills one in from its
own arguments; the layers between it and the service pass it along whole. Importing this
module loads neither pydantic nor the models.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from retrieval.domain.models import RagDocument


@dataclass(frozen=True)
class IngestRequest:
    """Write ``documents`` into ``namespace`` (None: the service's default); ``replace`` lets
    a document take an id another source holds."""

    documents: Sequence[RagDocument]
    namespace: str | None = None
    replace: bool = False


@dataclass(frozen=True)
class SyncRequest:
    """Make ``namespace`` (None: the service's default) hold exactly what ``roots`` hold:
    ``documents``, read from under the roots. Documents of a source in ``unreadable`` are
    kept; ``dry_run`` changes nothing; ``replace`` lets a document take an id another source
    holds; ``allow_mass_delete`` lifts the share of the namespace a sync may delete; with
    ``refused_as_outcomes`` a refused document fails alone and its source's documents are
    kept."""

    documents: Sequence[RagDocument]
    roots: Sequence[str]
    namespace: str | None = None
    unreadable: Collection[str] = ()
    dry_run: bool = False
    replace: bool = False
    allow_mass_delete: bool = False
    refused_as_outcomes: bool = False


@dataclass(frozen=True)
class DeleteRequest:
    """Delete ``document_ids`` from ``namespace`` (None: the service's default), and every
    document whose source is ``source_prefix`` or lies below it; ``dry_run`` only reports."""

    namespace: str | None = None
    document_ids: Sequence[str] = ()
    source_prefix: str | None = None
    dry_run: bool = False
