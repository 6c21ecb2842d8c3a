from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

import typer
from secantus.server import SecantusDBServer

from retrieval.cli.runtime import console
from retrieval_testkit.replica_load import run_load
from retrieval_testkit.replica_set import replica_set

TARGETS = ("internal_errors", "stale_reads", "lease_failures", "audit_mismatches")


def replicas(
    count: int = typer.Option(3, "--replicas", min=1, help="retrieval serve processes."),
    seconds: float = typer.Option(60.0, min=1.0, help="How long readers and writers run."),
    lag: float = typer.Option(1.0, min=0.0, help="Seconds the index shows writes late."),
    writers: int = typer.Option(2, min=1, help="Writers per replica."),
    readers: int = typer.Option(2, min=1, help="Readers per replica."),
    seed: int = typer.Option(0, help="Seed of the deletions."),
    reports: Path = typer.Option(Path("reports"), help="Where replicas.json is written."),
) -> None:
    """Replicas over one MongoDB-protocol server and the Pinecone stand-ins (writes shown
    ``--lag`` late), readers and writers on each; any INTERNAL error, read stale past the
    promised bound, document failed for a lease or store mismatch fails."""

    async def main() -> dict[str, object]:
        with tempfile.TemporaryDirectory(prefix="retrieval-replicas-") as workdir:
            server = SecantusDBServer(storage_path=str(Path(workdir) / "mongo"), port=0)
            server.start()
            try:
                async with replica_set(Path(workdir), server.uri, count, lag) as started:
                    return await run_load(started, Path(workdir), seconds, writers, readers, seed)
            finally:
                server.stop()

    with console.status(f"{count} replicas, {seconds:.0f} s of load"):
        report = asyncio.run(main())
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "replicas.json").write_text(json.dumps(report, indent=2))
    errors = ", ".join(f"{n} {status}" for status, n in report["errors_by_status"].items())
    console.print(
        f"{report['replicas']} replicas · {report['calls']} calls ({report['writes']} document "
        f"changes, {report['reads']} reads) · write calls p50/p95 "
        f"{report['write_call_seconds_p50']:.2f}/{report['write_call_seconds_p95']:.2f} s · "
        f"errors: {errors or 'none'}\n"
        + " · ".join(
            f"{target.replace('_', ' ')} {report[target]} (target 0)" for target in TARGETS
        )
        + f"\nwritten {reports / 'replicas.json'}"
    )
    if any(report[target] for target in TARGETS):
        raise typer.Exit(code=1)
