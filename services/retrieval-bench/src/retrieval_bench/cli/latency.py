from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.progress import Progress
from rich.table import Table

from retrieval.cli.runtime import console, load_settings, run_with_application
from retrieval.demo import demo_settings
from retrieval.lifecycle import Application
from retrieval_bench.latency import measure

OVERHEAD_TARGET = 1.10
DENSE_P95_TARGET_MS = 2.0


def latency(
    chunks: int = typer.Option(10_000, help="Chunks in the benchmark namespace."),
    queries: int = typer.Option(500, help="Queries measured (after a warm-up)."),
    top_k: int = typer.Option(10, help="Matches per query."),
    reports: Path = typer.Option(Path("reports"), help="Where bench.json is written."),
) -> None:
    """p50/p95 of each retrieve() stage and of the whole call, on the configured backends."""

    async def work(app: Application) -> dict:
        with Progress(console=console, transient=True) as progress:
            task = progress.add_task(f"{queries} queries over {chunks} chunks", total=queries)
            report = await measure(
                app, size=chunks, queries=queries, top_k=top_k,
                on_query=lambda: progress.advance(task),
            )  # fmt: skip
        return {"chunks": report.chunks, "queries": report.queries, **report.figures}

    figures = run_with_application(work, demo_settings(load_settings()))
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "bench.json").write_text(json.dumps(figures, indent=2))
    table = Table(title=f"retrieve() over {figures['chunks']} chunks, {figures['queries']} queries")
    for column in ("stage", "p50 ms", "p95 ms"):
        table.add_column(column, justify="left" if column == "stage" else "right")
    for stage in ("embed", "search", "fetch", "total"):
        table.add_row(stage, f"{figures['p50_ms'][stage]:.2f}", f"{figures['p95_ms'][stage]:.2f}")
    console.print(table)
    trips = ", ".join(f"{stage} {n:.2f}" for stage, n in figures["round_trips_mean"].items())
    console.print(
        f"store round trips per call {figures['round_trips_per_call_mean']:.2f} (mean): "
        f"{trips or 'none'}"
    )
    ratio, dense_p95 = figures["overhead_ratio_p50"], figures["dense_ms_domain_filtered"]["p95"]
    console.print(
        f"overhead ratio total/(search+fetch) p50 {ratio:.3f} (target <= {OVERHEAD_TARGET})\n"
        f"exact dense search p95: {figures['dense_ms_unfiltered']['p95']:.2f} ms unfiltered, "
        f"{dense_p95:.2f} ms with a domain filter (target < {DENSE_P95_TARGET_MS} ms)\n"
        f"peak memory {figures['peak_rss_mb']:.0f} MB · written {reports / 'bench.json'}"
    )
