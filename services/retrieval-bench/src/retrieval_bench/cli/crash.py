from __future__ import annotations

import json
from pathlib import Path

import typer

from retrieval.cli.runtime import console
from retrieval_bench.crash import run_harness


def crash(
    kills: int = typer.Option(200, help="SIGKILLs of the writing process, at least."),
    seed: int = typer.Option(0, help="Seed of the kill instants."),
    reports: Path = typer.Option(Path("reports"), help="Where crash.json is written."),
) -> None:
    """Kill a real process syncing, deleting or restoring at random instants; re-run; check
    every store."""
    with console.status("starting") as status:
        report = run_harness(kills, seed, on_kill=lambda n: status.update(f"{n}/{kills} kills"))
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "crash.json").write_text(json.dumps(report.as_dict(), indent=2))
    console.print(
        f"{report.kills} kills ({report.restore_kills} of restores), {report.reruns} re-runs "
        f"checked, {report.mismatches} mismatches "
        f"in {report.seconds:.0f} s · written {reports / 'crash.json'}"
    )
    if report.mismatches:
        raise typer.Exit(code=1)
