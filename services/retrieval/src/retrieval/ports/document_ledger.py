from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from retrieval.domain.ledger import DocumentRecord, Lease


@dataclass(frozen=True)
class Claim:
    """The outcome of claiming documents: records now leased to the caller, and the rest."""

    records: dict[str, DocumentRecord] = field(default_factory=dict)
    held: dict[str, Lease] = field(default_factory=dict)


class DocumentLedger(Protocol):
    """One record per document and namespace, written only under the writer's lease.

    A lease expires after the ledger's lease time unless renewed by ``save``; a document
    whose lease has expired (or whose holder is named in ``taking_over``) can be claimed.
    Every method that writes under a lease raises ``DocumentBusyError`` when the caller no
    longer holds it.

    A claimer that finds a document held joins its line of waiters: once the document is
    free, it goes to the waiters in the order they first asked, ahead of any later claimer.
    A waiter keeps its place while it asks again within ``WAITER_S`` (or the lease time, if
    shorter); a waiter in ``taking_over`` has none.
    """

    async def claim(
        self,
        namespace: str,
        document_ids: Sequence[str],
        lease: Lease,
        *,
        taking_over: Collection[str] = (),
    ) -> Claim:
        """Lease these documents to ``lease.owner`` where free and its turn; a document never
        stored gets a record with ``state=None``. A lease held by an owner in
        ``taking_over`` is taken at once, ahead of the waiters, who keep their places.
        ``held`` names, for each of the others, its holder or else the waiter whose turn it
        is."""
        ...

    async def save(self, records: Sequence[DocumentRecord], lease: Lease) -> None:
        """Replace these records (all leased to the caller) and renew the lease."""
        ...

    async def release(self, namespace: str, document_ids: Sequence[str], lease: Lease) -> None:
        """Give up the caller's lease; records that hold nothing (``is_empty``) are removed."""
        ...

    async def get_many(
        self, namespace: str, document_ids: Sequence[str]
    ) -> dict[str, DocumentRecord]:
        """Records of these documents in one round trip; unknown ones, and ones that never
        held a version (``state=None``), are absent."""
        ...

    async def with_sources(self, namespace: str, sources: Collection[str]) -> list[DocumentRecord]:
        """The records holding a version (committed or pending) whose source is one of
        ``sources`` (paths or URLs), by document id, in one round trip."""
        ...

    async def unsettled(self, host: str) -> list[tuple[DocumentRecord, Lease | None]]:
        """Records a writer may have left behind, by namespace and document id, each with its
        lease (None when none is in force): PENDING records no lease holds, and every record
        leased to a writer of ``host``, expired or not."""
        ...

    def list_records(self, namespace: str) -> AsyncIterator[list[DocumentRecord]]:
        """Every record of a namespace in pages, by document id."""
        ...

    async def namespaces(self) -> list[str]:
        """The namespaces holding a record, by name."""
        ...

    async def delete_namespace(self, namespace: str) -> int:
        """Remove every record of a namespace, leased or not; returns how many there were."""
        ...
