"""The replica load with faults done to it in turn, and what it shows.

Readers, writers and a deleter run on every replica (``retrieval_testkit.replica_load``)
while the nemesis does each kind of fault ``faults`` times, round-robin, ``calm_s`` apart.
After each fault is healed, the writers are held back (reads go on), and the stores are
audited with ``reconcile --dry-run`` until clean: the time from the fault's end to that clean
audit is its repair time. Once every fault is done, each replica is read past the bound; a
change acknowledged to a caller that this last read does not show was lost.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from retrieval_bench.nemesis.checks import (
    LagWindow,
    bound_at,
    lost_acknowledged_writes,
    non_monotonic_reads,
)
from retrieval_bench.nemesis.faults import FaultKind, FaultWindow, Nemesis
from retrieval_testkit.replica_history import Read
from retrieval_testkit.replica_load import (
    NAMESPACE,
    LoadRecord,
    WritePause,
    load,
    read_all_past,
    summary,
)
from retrieval_testkit.replica_set import ReplicaSet

AUDIT_EVERY_S = 0.5
EXAMPLES = 5
"""Reads gone back that the report shows in full."""


@dataclass(frozen=True)
class Schedule:
    """How many faults of each kind, and how long each lasts, the load running between."""

    faults: int
    calm_s: float
    hold_s: float
    repair_limit_s: float
    """Past this, a fault's repair is given up on and its stores counted as they are."""


@dataclass(frozen=True)
class Repair:
    """How long the stores took to audit clean after a fault, and what was left if never."""

    kind: FaultKind
    seconds: float
    first_mismatches: int
    """What the first audit after the fault found to repair."""
    mismatches: int


def shown(read: Read, began: float) -> dict[str, object]:
    """A read as the report gives it: which replica, when (seconds into the load), what."""
    return {
        "replica": read.replica,
        "started_s": round(read.started - began, 2),
        "shown": {document_id: sorted(versions) for document_id, versions in read.shown.items()},
    }


async def repaired(
    replicas: ReplicaSet, workdir: Path, pause: WritePause, fault: FaultWindow, limit_s: float
) -> Repair:
    """Hold the writers back and audit until the stores are clean, or ``limit_s`` after
    ``fault`` ended; the writers then go on."""
    await pause.hold()
    first: int | None = None
    try:
        while True:
            audit = await replicas.reconcile_report(workdir, NAMESPACE)
            seconds = time.monotonic() - fault.ended
            first = audit.documents_to_repair if first is None else first
            if audit.documents_to_repair == 0 or seconds > limit_s:
                return Repair(fault.kind, seconds, first, audit.documents_to_repair)
            await asyncio.sleep(AUDIT_EVERY_S)
    finally:
        pause.resume()


async def run_nemesis(
    replicas: ReplicaSet,
    nemesis: Nemesis,
    workdir: Path,
    schedule: Schedule,
    writers: int,
    readers: int,
    seed: int,
) -> dict[str, object]:
    """The load under ``schedule``'s faults; the report of what the callers saw."""
    began = time.monotonic()
    record = LoadRecord()
    done = asyncio.Event()
    pause = WritePause()
    loading = asyncio.create_task(load(replicas, record, done, pause, writers, readers, seed))
    kinds = [kind for _ in range(schedule.faults) for kind in FaultKind]
    random.Random(seed).shuffle(kinds)
    windows: list[FaultWindow] = []
    repairs: list[Repair] = []
    try:
        for kind in kinds:
            await asyncio.sleep(schedule.calm_s)
            windows.append(await nemesis.inject(kind))
            repair = await repaired(replicas, workdir, pause, windows[-1], schedule.repair_limit_s)
            repairs.append(repair)
    finally:
        done.set()
        await loading
    lag_windows = [
        LagWindow(w.started, w.ended, nemesis.raised_lag_s + replicas.bound_s - nemesis.lag_s)
        for w in windows
        if w.kind is FaultKind.INDEX_LAG
    ]
    last_bound_s = bound_at(time.monotonic(), replicas.bound_s, lag_windows)
    finished = time.monotonic()
    await read_all_past(replicas, record, last_bound_s)
    final_reads = [read for read in record.reads if read.started >= finished]
    audit = await replicas.reconcile_report(workdir, NAMESPACE)
    went_back = non_monotonic_reads(record.reads, record.changes)
    return {
        "replicas": len(replicas.clients),
        "bound_s": replicas.bound_s,
        "raised_lag_s": nemesis.raised_lag_s,
        "writers_per_replica": writers,
        "readers_per_replica": readers,
        "seconds": round(time.monotonic() - began, 1),
        "faults": dict(Counter(w.kind.value for w in windows)),
        "fault_hold_s": schedule.hold_s,
        "faults_leaving_repairs": sum(r.first_mismatches > 0 for r in repairs),
        **summary(record, lambda read: bound_at(read.started, replicas.bound_s, lag_windows)),
        "non_monotonic_reads": len(went_back),
        "non_monotonic_examples": [shown(read, began) for read in went_back[:EXAMPLES]],
        "lost_acknowledged_writes": len(lost_acknowledged_writes(final_reads, record.changes)),
        "audit_mismatches": audit.documents_to_repair,
        "unrepaired_faults": sum(r.mismatches > 0 for r in repairs),
        "repair_seconds_max": round(max((r.seconds for r in repairs), default=0.0), 2),
        "repair_seconds_by_kind": {
            kind.value: round(max(r.seconds for r in repairs if r.kind is kind), 2)
            for kind in FaultKind
            if any(r.kind is kind for r in repairs)
        },
    }
