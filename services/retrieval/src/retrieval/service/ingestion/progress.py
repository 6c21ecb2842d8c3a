"""What an ingestion reports as it goes, and how a long write keeps its lease."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from retrieval.domain.ledger import DocumentRecord, Lease
from retrieval.ports.document_ledger import DocumentLedger
from retrieval.service.ingestion.outcomes import DocumentOutcome

EMBEDDING_BATCH = 64
"""Passages a write embeds per call; its progress is reported after each call."""

ChunkCount = Callable[[int], None]
DocumentsSettled = Callable[[Sequence[DocumentOutcome]], None]


def unheard(_: object) -> None:
    """A report nobody listens to."""


@dataclass(frozen=True)
class IngestProgress:
    """What ``ingest`` reports as it goes, each call on the event loop:

    - ``to_embed(chunks)``: chunks the call is to embed, first once every document is chunked
      (before any write), then again, fewer, each time a group of documents needed less
      (unchanged documents, documents another writer holds, a write that failed);
    - ``embedded(chunks)``: a batch of this many passages is embedded;
    - ``settled(outcomes)``: a group of documents is settled, one outcome each.
    """

    to_embed: ChunkCount = unheard
    embedded: ChunkCount = unheard
    settled: DocumentsSettled = unheard

    @classmethod
    def of(cls, listener: Progress | None) -> IngestProgress:
        if listener is None:
            return cls()
        return listener if isinstance(listener, IngestProgress) else cls(settled=listener)


Progress = IngestProgress | DocumentsSettled
"""What ``on_progress`` takes: an ``IngestProgress``, or a function told of each group settled."""


@dataclass
class EmbeddedTally:
    """Passages one group's write embedded, each batch reported as it is done."""

    report: ChunkCount
    chunks: int = 0

    def add(self, chunks: int) -> None:
        self.chunks += chunks
        self.report(chunks)


@dataclass
class LeaseRenewal:
    """Saves a write's pending records again (which renews their lease) once ``every_s``
    has passed since the last save: a long embedding keeps its documents."""

    ledger: DocumentLedger
    pending: Sequence[DocumentRecord]
    lease: Lease
    every_s: float
    saved_at: float = field(default_factory=time.monotonic)

    async def __call__(self) -> None:
        if time.monotonic() - self.saved_at >= self.every_s:
            await self.ledger.save(self.pending, self.lease)
            self.saved_at = time.monotonic()
