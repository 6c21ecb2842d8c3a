from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.progress import Progress
from rich.table import Table

from retrieval.cli.runtime import console, load_settings, run_with_application
from retrieval.lifecycle import Application
from retrieval_bench.grpc_overhead import measure
from retrieval_bench.latency import UNCACHED

OVERHEAD_TARGET_MS = 2.0


def grpc(
    queries: int = typer.Option(300, help="Queries measured each way (after a warm-up)."),
    top_k: int = typer.Option(5, help="Matches per query."),
    reports: Path = typer.Option(Path("reports"), help="Where bench-grpc.json is written."),
) -> None:
    """p50/p95 of Retrieve over gRPC on loopback against the same retrieve() in-process."""

    async def work(app: Application) -> dict:
        with Progress(console=console, transient=True) as progress:
            task = progress.add_task(f"{queries} queries, in-process and over gRPC", total=queries)
            return await measure(
                app, queries=queries, top_k=top_k, on_query=lambda: progress.advance(task)
            )

    figures = run_with_application(work, load_settings().model_copy(update=UNCACHED))
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "bench-grpc.json").write_text(json.dumps(figures, indent=2))
    table = Table(
        title=f"retrieve(), {figures['queries']} queries over {figures['chunks']} chunks, "
        f"top_k {figures['top_k']}"
    )
    for column in ("path", "p50 ms", "p95 ms"):
        table.add_column(column, justify="left" if column == "path" else "right")
    for label, key in (
        ("in-process", "inproc"),
        ("gRPC loopback", "grpc"),
        ("difference", "overhead"),
    ):
        table.add_row(label, f"{figures[f'{key}_p50_ms']:.2f}", f"{figures[f'{key}_p95_ms']:.2f}")
    console.print(table)
    console.print(
        f"overhead p50 {figures['overhead_p50_ms']:.2f} ms (target <= {OVERHEAD_TARGET_MS} ms); "
        f"per query, paired: {figures['paired_overhead_p50_ms']:.2f} ms; "
        f"client wall minus server time: {figures['wire_overhead_p50_ms']:.2f} ms p50\n"
        f"rankings that differed: {figures['mismatches']} · answers from a cache: "
        f"{figures['cached_answers']} · written {reports / 'bench-grpc.json'}"
    )
    if figures["mismatches"] or figures["cached_answers"]:
        raise typer.Exit(code=1)
