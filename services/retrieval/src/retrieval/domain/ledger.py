"""The ingestion ledger: one record per stored document, the commit point of every write.

A document's chunks (texts and vectors) are written only under a record that names them.
``PENDING`` means a write is under way or died: the chunks in ``chunk_ids`` may be partly
stored, while ``previous`` (the last committed version) is still whole. ``COMMITTED`` means
every chunk in ``chunk_ids`` has its text and its vector. ``stale`` lists chunks of older
versions still to be removed. Only a committed record whose fingerprint matches and which
has nothing stale left lets a re-ingest say UNCHANGED.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import datetime
from enum import StrEnum

from pydantic import Field

from retrieval.domain.models import Frozen
from retrieval.domain.provenance import Source
from retrieval.errors import DocumentIdClashError


class DocumentState(StrEnum):
    PENDING = "pending"
    COMMITTED = "committed"


class Lease(Frozen):
    """Who is writing a document: one call of one process on one host."""

    owner: str = Field(description="Unique per call.")
    host: str = Field(description="Host name of the writing process.")
    pid: int = Field(description="Process id of the writing process on that host.")


WAITER_S = 5.0
"""A writer waiting for a held document keeps its place in line while it asks again within
this time (or the lease time, if shorter)."""

RELEASED = Lease(owner="", host="", pid=0)
"""What a ledger reports as the holder of a document another writer released (or removed)
while the claim ran: it is free, and claiming again takes it."""


class Provenance(Frozen):
    """What a version of a document was made from, and when."""

    title: str = Field(description="The document's title.")
    source: Source | None = Field(default=None, description="Where it was read from.")
    written_at: datetime = Field(description="When its write began.")

    @property
    def uri(self) -> str | None:
        return self.source.uri if self.source is not None else None


class DocumentRecord(Frozen):
    """What the stores hold, or are being made to hold, for one document."""

    namespace: str = Field(description="Namespace of the document.")
    document_id: str = Field(description="The document.")
    state: DocumentState | None = Field(
        default=None, description="None while claimed before anything was written."
    )
    fingerprint: str | None = Field(default=None, description="Digest of the chunk ids.")
    chunk_ids: tuple[str, ...] = Field(default=(), description="Chunks of this version.")
    previous: tuple[str, ...] = Field(
        default=(), description="While pending: chunks of the version being replaced."
    )
    previous_fingerprint: str | None = Field(
        default=None, description="While pending: fingerprint of that version."
    )
    stale: tuple[str, ...] = Field(default=(), description="Chunks of older versions to remove.")
    provenance: Provenance | None = Field(
        default=None,
        description="Of the version in ``chunk_ids``; None in records written before "
        "provenance was recorded, until their next write.",
    )
    previous_provenance: Provenance | None = Field(
        default=None, description="While pending: provenance of the version being replaced."
    )

    @property
    def source(self) -> str | None:
        """The path or URL the document's chunks came from, if known."""
        return self.provenance.uri if self.provenance is not None else None

    def clash(self, source: str | None) -> DocumentIdClashError | None:
        """The error of writing a version from ``source`` over this record without replacing
        on purpose: None when a version of it (current, or while pending, previous) came
        from ``source``, or when the record predates provenance (it is adopted)."""
        known = [p.uri for p in (self.provenance, self.previous_provenance) if p is not None]
        if not known or source in known:
            return None
        return DocumentIdClashError(self.document_id, known[0], source)

    @property
    def committed(self) -> tuple[str, ...]:
        """Chunks of the last committed version: the one readers are shown."""
        if self.state is DocumentState.PENDING:
            return self.previous
        return self.chunk_ids if self.state is DocumentState.COMMITTED else ()

    @property
    def referenced(self) -> set[str]:
        """Every chunk id this record accounts for."""
        return {*self.chunk_ids, *self.previous, *self.stale}

    def is_current(self, fingerprint: str) -> bool:
        return (
            self.state is DocumentState.COMMITTED
            and self.fingerprint == fingerprint
            and not self.stale
        )

    def begin(
        self,
        chunk_ids: Iterable[str],
        fingerprint: str,
        provenance: Provenance,
        found: Iterable[str] = (),
    ) -> DocumentRecord:
        """The pending record of a write of ``chunk_ids`` over whatever this record holds;
        ``found`` are chunks of the document stored without the record knowing them (written
        before the ledger, or left by an interrupted namespace deletion)."""
        target = tuple(sorted(set(chunk_ids)))
        if self.state is DocumentState.PENDING:
            previous, previous_fingerprint = self.previous, self.previous_fingerprint
            previous_provenance = self.previous_provenance
            leftovers = {*self.stale, *self.chunk_ids, *found}
        else:
            previous, previous_fingerprint = self.chunk_ids, self.fingerprint
            previous_provenance = self.provenance
            leftovers = {*self.stale, *found}
        keep = {*target, *previous}
        return self.model_copy(
            update={
                "state": DocumentState.PENDING,
                "fingerprint": fingerprint,
                "chunk_ids": target,
                "previous": previous,
                "previous_fingerprint": previous_fingerprint,
                "stale": tuple(sorted(leftovers - keep)),
                "provenance": provenance,
                "previous_provenance": previous_provenance,
            }
        )

    def commit(self) -> DocumentRecord:
        """The pending write is whole: older chunks become stale."""
        stale = ({*self.stale, *self.previous}) - set(self.chunk_ids)
        return self.model_copy(
            update={
                "state": DocumentState.COMMITTED,
                "previous": (),
                "previous_fingerprint": None,
                "stale": tuple(sorted(stale)),
                "previous_provenance": None,
            }
        )

    def abandon(self) -> DocumentRecord:
        """Back to the last committed version after the chunks new in this write are gone."""
        return self.model_copy(
            update={
                "state": DocumentState.COMMITTED if self.previous else None,
                "fingerprint": self.previous_fingerprint,
                "chunk_ids": self.previous,
                "previous": (),
                "previous_fingerprint": None,
                "provenance": self.previous_provenance,
                "previous_provenance": None,
            }
        )

    @property
    def fresh(self) -> tuple[str, ...]:
        """While pending: chunks this write adds that the committed version does not have."""
        return tuple(sorted(set(self.chunk_ids) - set(self.previous)))

    def retire(self, found: Iterable[str] = ()) -> DocumentRecord:
        """The committed empty version: every chunk this record or ``found`` names is stale.
        The provenance stays, so a deletion cut short is found again by its source."""
        return self.model_copy(
            update={
                "state": DocumentState.COMMITTED,
                "fingerprint": None,
                "chunk_ids": (),
                "previous": (),
                "previous_fingerprint": None,
                "stale": tuple(sorted({*self.referenced, *found})),
                "previous_provenance": None,
            }
        )

    def cleaned(self) -> DocumentRecord:
        return self.model_copy(update={"stale": ()})

    @property
    def is_empty(self) -> bool:
        return not self.chunk_ids and not self.previous and not self.stale


def fingerprint(chunk_ids: Iterable[str]) -> str:
    return hashlib.sha256("\n".join(sorted(chunk_ids)).encode()).hexdigest()[:32]
