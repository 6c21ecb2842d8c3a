"""Claiming documents for writing: one writer per document, across processes and replicas."""

from __future__ import annotations

import asyncio
import os
import random
import socket
import time
import uuid
from collections.abc import Sequence

from retrieval.domain.ledger import Lease
from retrieval.ports.document_ledger import Claim, DocumentLedger

FIRST_WAIT_S = 0.05
LONGEST_WAIT_S = 1.0


def new_lease() -> Lease:
    return Lease(owner=uuid.uuid4().hex, host=socket.gethostname(), pid=os.getpid())


def holder_is_dead(lease: Lease) -> bool:
    """True when the lease was taken by a process of this host that no longer runs."""
    if lease.host != socket.gethostname() or lease.pid == os.getpid():
        return False
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

    A lease held by a dead process of this host is taken over at once; any other lease
    is waited out until its holder releases it or it expires.
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
