"""Claiming documents for writing: one writer per document, across processes and replicas."""

from __future__ import annotations

import asyncio
import os
import random
import socket
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from retrieval.domain.ledger import Lease
from retrieval.ports.document_ledger import Claim, DocumentLedger

FIRST_WAIT_S = 0.05
LONGEST_WAIT_S = 1.0


running_writers: set[str] = set()
"""The owners of the leases this process's writers hold now. Any other lease of this process
was left by a writer that ended without releasing it (the ledger failed, say while MongoDB
restarted): nothing writes under it any more."""


@contextmanager
def writer_lease() -> Iterator[Lease]:
    """A new lease for one writer (an ingestion, a deletion, a repair) while it runs."""
    lease = Lease(owner=uuid.uuid4().hex, host=socket.gethostname(), pid=os.getpid())
    running_writers.add(lease.owner)
    try:
        yield lease
    finally:
        running_writers.discard(lease.owner)


def holder_is_dead(lease: Lease) -> bool:
    """True when the lease was taken by a process of this host that no longer runs, or by a
    writer of this process that has ended."""
    if lease.host != socket.gethostname():
        return False
    if lease.pid == os.getpid():
        return lease.owner not in running_writers
    try:
        os.kill(lease.pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


async def claim_documents(
    ledger: DocumentLedger,
    namespace: str,
    document_ids: Sequence[str],
    lease: Lease,
    wait_s: float,
) -> Claim:
    """Claim what is free now; wait (with backoff, at most ``wait_s``) for what is held.

    A lease held by a dead process of this host, or left by an ended writer of this process,
    is taken over at once; any other lease is waited out until its holder releases it or it
    expires.
    """
    deadline = time.monotonic() + wait_s
    delay = FIRST_WAIT_S
    records = {}
    wanted = list(document_ids)
    while True:
        claim = await ledger.claim(namespace, wanted, lease)
        records.update(claim.records)
        held = claim.held
        dead = {holder.owner for holder in held.values() if holder_is_dead(holder)}
        if dead:
            claim = await ledger.claim(namespace, list(held), lease, taking_over=dead)
            records.update(claim.records)
            held = claim.held
        if not held or time.monotonic() >= deadline:
            return Claim(records=records, held=held)
        await asyncio.sleep(min(delay * (1 + random.random()), deadline - time.monotonic()))
        delay = min(delay * 2, LONGEST_WAIT_S)
        wanted = list(held)
