from __future__ import annotations

import json
import os
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from retrieval.cli.runtime import console
from retrieval_testkit.fuzz import TARGETS, FuzzReport, TargetReport
from retrieval_testkit.fuzz import fuzz as fuzz_targets


def table(report: FuzzReport) -> Table:
    shown = Table(title=f"fuzz, {report.cases_per_target} cases per target, seed {report.seed}")
    for column in ("target", "cases", "refused", "failures", "seconds", "cases/s"):
        shown.add_column(column, justify="left" if column == "target" else "right")
    for target in report.targets:
        shown.add_row(
            target.name,
            str(target.cases),
            str(target.refused),
            str(target.failures),
            f"{target.seconds:.1f}",
            f"{target.cases / target.seconds:.0f}" if target.seconds else "-",
        )
    return shown


def fuzz(
    cases: int = typer.Option(10_000, min=1, help="Cases per target."),
    targets: list[str] = typer.Option(
        [], "--target", help="Fuzz only this target (repeatable); every target by default."
    ),
    seed: int = typer.Option(0, help="Seed of the generated cases."),
    timeout: float = typer.Option(30.0, min=0.1, help="Seconds before a case counts as hung."),
    workers: int = typer.Option(
        min(2, os.cpu_count() or 1), min=1, help="Processes fuzzing targets side by side."
    ),
    reports: Path = typer.Option(Path("reports"), help="Where fuzz.json is written."),
) -> None:
    """Hypothesis against every public input; any crash, hang, INTERNAL/UNKNOWN or untyped
    error fails."""
    unknown = sorted(set(targets) - TARGETS.keys())
    if unknown:
        raise typer.BadParameter(
            f"unknown {unknown}; known: {sorted(TARGETS)}", param_hint="--target"
        )

    def done(target: TargetReport) -> None:
        console.print(f"{target.name}: {target.cases} cases, {target.failures} failures")

    chosen = [TARGETS[name] for name in targets or TARGETS]
    with console.status(f"fuzzing {', '.join(target.name for target in chosen)}"):
        report = fuzz_targets(
            chosen, cases=cases, seed=seed, timeout_s=timeout, workers=workers, on_target=done
        )
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "fuzz.json").write_text(json.dumps(report.as_dict(), indent=2))
    console.print(table(report))
    for target in report.failed:
        assert target.first is not None
        console.print(
            f"[red]{target.name}[/red]: {target.failures} failing cases; the first:\n"
            f"  input: {escape(target.first.example)}\n  error: {escape(target.first.error)}"
        )
    console.print(f"written {reports / 'fuzz.json'}")
    if report.failed:
        raise typer.Exit(code=1)
