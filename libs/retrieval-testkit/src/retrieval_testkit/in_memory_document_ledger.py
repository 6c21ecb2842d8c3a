"""A DocumentLedger in a dict, with leases timed by a clock the test can move."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Collection, Sequence

from retrieval.domain.ledger import WAITER_S, DocumentRecord, DocumentState, Lease
from retrieval.errors import DocumentBusyError
from retrieval.ports.document_ledger import Claim


class InMemoryDocumentLedger:
    def __init__(self, lease_s: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._lease_s = lease_s
        self._clock = clock
        self._records: dict[tuple[str, str], DocumentRecord] = {}
        self._leases: dict[tuple[str, str], tuple[Lease, float]] = {}
        self._lines: dict[tuple[str, str], list[tuple[Lease, float]]] = {}

    async def claim(
        self,
        namespace: str,
        document_ids: Sequence[str],
        lease: Lease,
        *,
        taking_over: Collection[str] = (),
    ) -> Claim:
        claim = Claim()
        now = self._clock()
        for document_id in dict.fromkeys(document_ids):
            key = (namespace, document_id)
            line = [
                (waiter, until)
                for waiter, until in self._lines.get(key, [])
                if until >= now and waiter.owner not in taking_over
            ]
            owners = [waiter.owner for waiter, _ in line]
            place = owners.index(lease.owner) if lease.owner in owners else len(line)
            holder = self._leases.get(key)
            ours = holder is not None and holder[0].owner in {lease.owner, *taking_over}
            held_by = None
            if holder is not None and holder[1] > now and not ours:
                held_by = holder[0]
            if held_by is not None or (place > 0 and not ours):
                claim.held[document_id] = held_by or line[0][0]
                waiting = (lease, now + min(WAITER_S, self._lease_s))
                line[place : place + 1] = [waiting]
                self._lines[key] = line
                continue
            self._lines[key] = [entry for entry in line if entry[0].owner != lease.owner]
            self._leases[key] = (lease, now + self._lease_s)
            claim.records[document_id] = self._records.get(
                key, DocumentRecord(namespace=namespace, document_id=document_id)
            )
        return claim

    async def save(self, records: Sequence[DocumentRecord], lease: Lease) -> None:
        for record in records:
            self._check(record.namespace, record.document_id, lease)
        now = self._clock()
        for record in records:
            key = (record.namespace, record.document_id)
            self._records[key] = record
            self._leases[key] = (lease, now + self._lease_s)

    async def release(self, namespace: str, document_ids: Sequence[str], lease: Lease) -> None:
        for document_id in document_ids:
            key = (namespace, document_id)
            holder = self._leases.get(key)
            if holder is None or holder[0].owner != lease.owner:
                continue
            del self._leases[key]
            record = self._records.get(key)
            if record is not None and record.is_empty:
                del self._records[key]

    async def get_many(
        self, namespace: str, document_ids: Sequence[str]
    ) -> dict[str, DocumentRecord]:
        found = (self._records.get((namespace, document_id)) for document_id in document_ids)
        return {r.document_id: r for r in found if r is not None and r.state is not None}

    async def with_sources(self, namespace: str, sources: Collection[str]) -> list[DocumentRecord]:
        return sorted(
            (
                record
                for (ns, _), record in self._records.items()
                if ns == namespace and record.state is not None and record.source in sources
            ),
            key=lambda record: record.document_id,
        )

    async def unsettled(self, host: str) -> list[tuple[DocumentRecord, Lease | None]]:
        now = self._clock()
        found: list[tuple[DocumentRecord, Lease | None]] = []
        for key in sorted(self._records.keys() | self._leases.keys()):
            record = self._records.get(key, DocumentRecord(namespace=key[0], document_id=key[1]))
            lease, until = self._leases.get(key, (None, now))
            if lease is not None and lease.host == host:
                found.append((record, lease))
            elif record.state is DocumentState.PENDING and until <= now:
                found.append((record, None))
        return found

    async def list_records(self, namespace: str) -> AsyncIterator[list[DocumentRecord]]:
        found = sorted(
            (record for (ns, _), record in self._records.items() if ns == namespace),
            key=lambda record: record.document_id,
        )
        for start in range(0, len(found), 100):
            yield found[start : start + 100]

    async def namespaces(self) -> list[str]:
        return sorted({namespace for namespace, _ in self._records})

    async def delete_namespace(self, namespace: str) -> int:
        doomed = [key for key in self._records if key[0] == namespace]
        for key in doomed:
            del self._records[key]
        for held in (self._leases, self._lines):
            for key in [key for key in held if key[0] == namespace]:
                del held[key]
        return len(doomed)

    def _check(self, namespace: str, document_id: str, lease: Lease) -> None:
        holder = self._leases.get((namespace, document_id))
        if holder is None or holder[0].owner != lease.owner:
            raise DocumentBusyError.of(namespace, document_id)
