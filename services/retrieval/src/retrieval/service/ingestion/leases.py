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

import structlog

from retrieval.deadlines import undo_bound
from retrieval.domain.ledger import RELEASED, DocumentRecord, Lease
from retrieval.errors import RetrievalError
from retrieval.ports.document_ledger import Claim, DocumentLedger

log = structlog.get_logger("ingestion")

FIRST_WAIT_S = 0.05
LONGEST_WAIT_S = 0.25


running_writers: set[str] = set()
"""The owners of the leases this process's writers hold now. Any other lease of this process
was left by a writer that ended without releasing it (the ledger failed, say while MongoDB
restarted): nothing writes under it any more."""


def this_host() -> str:
    """The host this process's leases name: ``RETRIEVAL_HOST_ID`` when set (a replica whose
    host name is not unique, or a test standing for another machine), else the host name."""
    return os.environ.get("RETRIEVAL_HOST_ID") or socket.gethostname()


@contextmanager
def writer_lease() -> Iterator[Lease]:
    """A new lease for one writer (an ingestion, a deletion, a repair) while it runs."""
    lease = Lease(owner=uuid.uuid4().hex, host=this_host(), pid=os.getpid())
    running_writers.add(lease.owner)
    try:
        yield lease
    finally:
        running_writers.discard(lease.owner)


def holder_is_dead(lease: Lease) -> bool:
    """True when the lease was taken by a process of this host that no longer runs, or by a
    writer of this process that has ended."""
    if lease.host != this_host():
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
    """Claim documents in id order; wait (with jittered backoff, at most ``wait_s``) for
    those held.

    While one is held, the caller keeps only the documents before it in id order and gives
    the others back, so writers of overlapping sets in any order never wait on each other in
    a circle: the one holding the lowest contested id goes on. A lease held by a dead process
    of this host, or left by an ended writer of this process, is taken over at once; any
    other lease is waited out until its holder releases it or it expires. At the deadline,
    the documents not claimed are ``held``. If claiming fails, what it took is given back.
    """
    deadline = time.monotonic() + wait_s
    delay = FIRST_WAIT_S
    wanted = sorted(set(document_ids))
    records: dict[str, DocumentRecord] = {}
    try:
        while True:
            held = await claim_free(ledger, namespace, wanted, lease, records)
            if not held:
                return Claim(records=records)
            blocked = min(held)
            given_back = [document_id for document_id in records if document_id > blocked]
            if given_back:
                await ledger.release(namespace, given_back, lease)
                for document_id in given_back:
                    del records[document_id]
            if time.monotonic() >= deadline:
                missing = [document_id for document_id in wanted if document_id not in records]
                return Claim(records=records, held={d: held.get(d, held[blocked]) for d in missing})
            if all(holder == RELEASED for holder in held.values()):
                continue
            await asyncio.sleep(min(delay * (1 + random.random()), deadline - time.monotonic()))
            delay = min(delay * 2, LONGEST_WAIT_S)
    except BaseException:
        await release_documents(ledger, namespace, wanted, lease)
        raise


async def release_documents(
    ledger: DocumentLedger, namespace: str, document_ids: Sequence[str], lease: Lease
) -> None:
    """Give documents back once their writer is done, however it ended; a failure, or the
    end of a stopped call's undo time, leaves them leased until the lease expires (or, in
    this process, until the next claim takes them over from the ended writer)."""
    try:
        async with undo_bound():
            await ledger.release(namespace, document_ids, lease)
    except RetrievalError as error:
        log.warning("ingest.release_failed", namespace=namespace, error=str(error))


async def claim_free(
    ledger: DocumentLedger,
    namespace: str,
    wanted: Sequence[str],
    lease: Lease,
    records: dict[str, DocumentRecord],
) -> dict[str, Lease]:
    """Claim what of ``wanted`` is free and not in ``records`` yet (adding it there), taking
    over dead holders' leases; returns the holders of the rest."""
    claim = await ledger.claim(namespace, [d for d in wanted if d not in records], lease)
    records.update(claim.records)
    held = claim.held
    dead = {holder.owner for holder in held.values() if holder_is_dead(holder)}
    if dead:
        claim = await ledger.claim(namespace, list(held), lease, taking_over=dead)
        records.update(claim.records)
        held = claim.held
    return held
