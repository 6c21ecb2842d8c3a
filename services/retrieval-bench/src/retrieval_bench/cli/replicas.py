from __future__ import annotations

import asyncio
import json
import random
import tempfile
from pathlib import Path

import typer

from retrieval.cli.runtime import console
from retrieval.logging import configure_logging
from retrieval_bench.nemesis.faults import Nemesis
from retrieval_bench.nemesis.run import Schedule, run_nemesis
from retrieval_bench.targets import FAULT_COUNTS
from retrieval_testkit.mongo_process import mongo_process
from retrieval_testkit.replica_load import run_load
from retrieval_testkit.replica_set import replica_set

TARGETS = ("internal_errors", "stale_reads", "lease_failures", "audit_mismatches")
QUICK = Schedule(faults=1, calm_s=1.0, hold_s=2.0, repair_limit_s=60.0)


def replicas(
    count: int = typer.Option(3, "--replicas", min=1, help="retrieval serve processes."),
    seconds: float = typer.Option(
        60.0, min=1.0, help="How long readers and writers run with no faults."
    ),
    lag: float = typer.Option(1.0, min=0.1, help="Seconds the index shows writes late."),
    writers: int = typer.Option(2, min=1, help="Writers per replica."),
    readers: int = typer.Option(2, min=1, help="Readers per replica."),
    faults: int = typer.Option(
        0, min=0, help="Faults of each kind done under the load (0: none, --seconds of load)."
    ),
    quick: bool = typer.Option(False, help=f"One fault of each kind, {QUICK.hold_s:.0f} s each."),
    hold: float = typer.Option(5.0, min=0.1, help="Seconds each fault lasts."),
    calm: float = typer.Option(5.0, min=0.0, help="Seconds of load before each fault."),
    lease: float = typer.Option(30.0, min=1.0, help="RETRIEVAL_INGEST_LEASE_S of the replicas."),
    seed: int = typer.Option(0, help="Seed of the deletions and of the faults' order."),
    reports: Path = typer.Option(Path("reports"), help="Where replicas.json is written."),
) -> None:
    """Replicas over one MongoDB-protocol server and the Pinecone stand-ins (writes shown
    ``--lag`` late), readers and writers on each; any INTERNAL error, read stale past the
    promised bound, document failed for a lease or store mismatch fails. With ``--faults``
    (or ``--quick``), replicas are killed, the index stalled, MongoDB restarted and the
    index's lag raised under the load: a read gone back to an older version, a lost
    acknowledged write, or a repair slower than the lease plus 10 s fails too."""
    schedule = (
        QUICK
        if quick
        else Schedule(faults=faults, calm_s=calm, hold_s=hold, repair_limit_s=lease + 60.0)
    )
    variables = {"RETRIEVAL_INGEST_LEASE_S": str(lease)} if schedule.faults else {}
    configure_logging("WARNING")

    async def main() -> dict[str, object]:
        with tempfile.TemporaryDirectory(prefix="retrieval-replicas-") as workdir:
            work = Path(workdir)
            async with (
                mongo_process(work / "mongo" / "data") as mongo,
                replica_set(work, mongo.uri, count, lag, **variables) as started,
            ):
                if not schedule.faults:
                    return await run_load(started, work, seconds, writers, readers, seed)
                raised_lag = started.bound_s + 2.0
                nemesis = Nemesis(
                    started, mongo, lag, raised_lag, schedule.hold_s, random.Random(seed)
                )
                report = await run_nemesis(started, nemesis, work, schedule, writers, readers, seed)
                return report | {"lease_s": lease}

    with console.status(f"{count} replicas, {schedule.faults} faults of each kind"):
        report = asyncio.run(main())
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "replicas.json").write_text(json.dumps(report, indent=2))
    errors = ", ".join(f"{n} {status}" for status, n in report["errors_by_status"].items())
    targets = FAULT_COUNTS if schedule.faults else TARGETS
    console.print(
        f"{report['replicas']} replicas · {report['calls']} calls ({report['writes']} document "
        f"changes, {report['reads']} reads) · write calls p50/p95 "
        f"{report['write_call_seconds_p50']:.2f}/{report['write_call_seconds_p95']:.2f} s · "
        f"errors: {errors or 'none'}\n"
        + (
            f"faults: {report['faults']}, {report['faults_leaving_repairs']} leaving repairs · "
            f"repair max {report['repair_seconds_max']:.1f} s (target {lease + 10:.0f}) · "
            f"lease failures {report['lease_failures']}\n"
            if schedule.faults
            else ""
        )
        + " · ".join(
            f"{target.replace('_', ' ')} {report[target]} (target 0)" for target in targets
        )
        + f"\nwritten {reports / 'replicas.json'}"
    )
    slow = schedule.faults and report["repair_seconds_max"] > lease + 10
    if slow or any(report[target] for target in targets):
        raise typer.Exit(code=1)
