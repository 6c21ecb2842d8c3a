"""Readers and writers on every replica for a while, then what they saw, checked.

Writers rewrite the same documents, half of them in the opposite order; one deleter removes
a document now and then; readers ask a question every document answers and note which
version of each they were shown. Afterwards every replica is read once more past the bound,
and the stores are audited with ``reconcile --dry-run``.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from retrieval.domain.models import RagDocument
from retrieval.errors import DocumentBusyError, NotFoundError, RetrievalError
from retrieval.grpc import RetrievalClient
from retrieval.grpc.errors import status_of
from retrieval.service.ingestion.outcomes import Outcome
from retrieval_testkit.replica_history import Change, Read, stale_documents
from retrieval_testkit.replica_set import ReplicaSet

NAMESPACE = "replica-load"
DOCUMENTS = [f"doc-{n}" for n in range(5)]
QUESTION = "how many hours is fresh tea leaf withered"
SHOWN = re.compile(r"garden (doc-\d+) is withered for (\S+) hours")
DELETE_EVERY_S = 2.0
READ_PAUSE_S = 0.05
"""A reader's pause between reads: readers are many callers, not a flood that leaves
writers no core on a small machine."""
FAILED_CALL_PAUSE_S = 0.5
"""A caller's pause after a call that failed (a replica down answers at once), as a client
backs off, rather than a loop of failures."""


def document(document_id: str, version: str) -> RagDocument:
    return RagDocument(
        document_id=document_id,
        title=f"Withering {document_id}",
        domain="quality_standards",
        content=f"Fresh tea leaf from garden {document_id} is withered for {version} hours.",
    )


@dataclass
class LoadRecord:
    """Every call's outcome, every change and every read, as they happen."""

    calls: int = 0
    write_seconds: list[float] = field(default_factory=list)
    errors_by_status: Counter[str] = field(default_factory=Counter)
    lease_failures: int = 0
    changes: dict[str, list[Change]] = field(default_factory=lambda: defaultdict(list))
    reads: list[Read] = field(default_factory=list)

    async def call(self, work: Awaitable[object]) -> object | None:
        """The call's answer, or None with its status counted."""
        self.calls += 1
        try:
            return await work
        except NotFoundError:
            raise
        except RetrievalError as error:
            self.errors_by_status[status_of(error)[0].name] += 1
        return None


async def write(record: LoadRecord, client: RetrievalClient, ids: list[str], version: str) -> None:
    started = time.monotonic()
    documents = [document(d, version) for d in ids]
    outcomes = await record.call(client.ingest_documents(documents, namespace=NAMESPACE))
    ended = time.monotonic()
    if outcomes is None:
        await asyncio.sleep(FAILED_CALL_PAUSE_S)
    record.write_seconds.append(ended - started)
    done = {o.document_id: o for o in outcomes or []}
    for document_id in ids:
        outcome = done.get(document_id)
        failed = outcome is None or outcome.outcome == Outcome.FAILED
        busy = str(DocumentBusyError.of(NAMESPACE, document_id))
        record.lease_failures += outcome is not None and outcome.error == busy
        record.changes[document_id].append(
            Change(document_id, version, started, ended, acknowledged=not failed)
        )


async def delete(record: LoadRecord, client: RetrievalClient, document_id: str) -> None:
    started = time.monotonic()
    report = await record.call(client.delete([document_id], namespace=NAMESPACE))
    busy = report is None or document_id in report.busy
    record.lease_failures += report is not None and busy
    change = Change(document_id, None, started, time.monotonic(), acknowledged=not busy)
    record.changes[document_id].append(change)


async def read(record: LoadRecord, client: RetrievalClient, replica: int) -> None:
    started = time.monotonic()
    try:
        result = await record.call(client.retrieve(QUESTION, top_k=10, namespace=NAMESPACE))
    except NotFoundError:
        record.reads.append(Read(started, {}, replica, time.monotonic()))
        return
    ended = time.monotonic()
    await asyncio.sleep(READ_PAUSE_S)
    if result is None:
        return
    shown: dict[str, set[str]] = defaultdict(set)
    for match in result.matches:
        for document_id, version in SHOWN.findall(match.content):
            shown[document_id].add(version)
    versions = {d: frozenset(v) for d, v in shown.items()}
    record.reads.append(Read(started, versions, replica, ended))


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else 0.0


class WritePause:
    """Lets writers and the deleter go on, or holds them back once their calls under way end."""

    def __init__(self) -> None:
        self._open = asyncio.Event()
        self._open.set()
        self._writing = 0
        self._changed = asyncio.Condition()

    async def write(self, work: Awaitable[None]) -> None:
        await self._open.wait()
        self._writing += 1
        try:
            await work
        finally:
            async with self._changed:
                self._writing -= 1
                self._changed.notify_all()

    async def hold(self) -> None:
        """Return once no write is under way, holding back the next ones until ``resume``."""
        self._open.clear()
        async with self._changed:
            await self._changed.wait_for(lambda: self._writing == 0)

    def resume(self) -> None:
        self._open.set()


async def until(done: asyncio.Event, step: Callable[[int], Awaitable[None]]) -> None:
    n = 0
    while not done.is_set():
        await step(n)
        n += 1


async def load(
    replicas: ReplicaSet,
    record: LoadRecord,
    done: asyncio.Event,
    pause: WritePause,
    writers: int,
    readers: int,
    seed: int,
) -> None:
    """Readers and writers on every replica, and one deleter, until ``done`` is set."""
    rng = random.Random(seed)
    tasks = []
    for r, client in enumerate(replicas.clients):
        for w in range(writers):
            order = DOCUMENTS if (r + w) % 2 == 0 else DOCUMENTS[::-1]
            name = f"r{r}w{w}"

            async def writer(n: int, c: RetrievalClient = client, o=order, v: str = name) -> None:
                await pause.write(write(record, c, o, f"{v}n{n}"))

            tasks.append(until(done, writer))
        tasks.extend(
            until(done, lambda _, c=client, n=r: read(record, c, n)) for _ in range(readers)
        )

    async def deleter(_: int) -> None:
        await asyncio.sleep(DELETE_EVERY_S * rng.uniform(0.5, 1.5))
        client = rng.choice(replicas.clients)
        await pause.write(delete(record, client, rng.choice(DOCUMENTS)))

    tasks.append(until(done, deleter))
    await asyncio.gather(*tasks)


async def read_all_past(replicas: ReplicaSet, record: LoadRecord, bound_s: float) -> None:
    """Once ``bound_s`` has passed, read every replica once more."""
    await asyncio.sleep(bound_s)
    for r, client in enumerate(replicas.clients):
        await read(record, client, r)


def summary(record: LoadRecord, bound_of: Callable[[Read], float]) -> dict[str, object]:
    """The calls, their errors and the stale reads, a read's bound given by ``bound_of``."""
    stale = [seen for seen in record.reads if stale_documents(seen, record.changes, bound_of(seen))]
    return {
        "calls": record.calls,
        "writes": sum(len(history) for history in record.changes.values()),
        "reads": len(record.reads),
        "write_call_seconds_p50": round(percentile(record.write_seconds, 50), 3),
        "write_call_seconds_p95": round(percentile(record.write_seconds, 95), 3),
        "errors_by_status": dict(record.errors_by_status),
        "internal_errors": record.errors_by_status.get("INTERNAL", 0),
        "stale_reads": len(stale),
        "lease_failures": record.lease_failures,
    }


async def run_load(
    replicas: ReplicaSet,
    workdir: Path,
    seconds: float,
    writers: int = 2,
    readers: int = 2,
    seed: int = 0,
) -> dict[str, object]:
    """Run the load for ``seconds`` and return the report: calls, errors by status, stale
    reads, documents failed for a lease, audit mismatches."""
    record = LoadRecord()
    done = asyncio.Event()
    asyncio.get_running_loop().call_later(seconds, done.set)
    await load(replicas, record, done, WritePause(), writers, readers, seed)
    await read_all_past(replicas, record, replicas.bound_s)
    audit = await replicas.reconcile_report(workdir, NAMESPACE)
    return {
        "replicas": len(replicas.clients),
        "seconds": seconds,
        "bound_s": replicas.bound_s,
        "writers_per_replica": writers,
        "readers_per_replica": readers,
        **summary(record, lambda _: replicas.bound_s),
        "audit_mismatches": audit.documents_to_repair,
    }
