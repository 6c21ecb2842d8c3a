from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from retrieval.cli.runtime import console
from retrieval.logging import configure_logging
from retrieval_bench.concurrency import RATIO_TARGET
from retrieval_bench.thread_settings import (
    SERVICE_SETTING,
    ConcurrencyProfile,
    run_benchmark,
)

DEFAULT = ConcurrencyProfile()


def concurrency(
    chunks: int = typer.Option(DEFAULT.chunks, min=10, help="Chunks in the benchmark namespace."),
    callers: list[int] = typer.Option(
        list(DEFAULT.levels), min=1, help="Concurrent callers of a level (repeat for each)."
    ),
    calls: int = typer.Option(
        DEFAULT.calls, min=2, help="Calls measured at each level (at least three per caller)."
    ),
    passes: int = typer.Option(DEFAULT.passes, min=1, help="Processes per thread setting."),
    reports: Path = typer.Option(Path("reports"), help="Where concurrency.json is written."),
) -> None:
    """retrieve() with many callers in one process against the raw embedder (the ceiling),
    event-loop lag, and the model's and numpy's thread settings compared, each in a process
    of its own, on the embedded stack in a temporary directory."""
    configure_logging("WARNING")
    profile = ConcurrencyProfile(chunks, tuple(callers), calls, passes=passes)
    with console.status("starting") as status:
        figures = run_benchmark(profile, on_step=lambda step: status.update(f"measuring {step}"))
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "concurrency.json").write_text(json.dumps(figures, indent=2))
    console.print(levels_table(figures))
    console.print(threads_table(figures))
    short = [n for n, level in figures["levels"].items() if level["ratio"] < RATIO_TARGET]
    verdict = f"not met with {', '.join(short)} callers" if short else "met at every level"
    idle = figures["idle_loop_lag_ms"]
    best = figures["best_threads"]
    console.print(
        f"throughput over the raw embedder's: target >= {RATIO_TARGET:.2f}, {verdict}\n"
        f"loop lag of the idle loop: p95 {idle['p95']:.1f} ms, max {idle['max']:.1f} ms\n"
        f"best thread setting: {best}{'' if best == SERVICE_SETTING else ' (not the default)'}"
        f" · written {reports / 'concurrency.json'}"
    )


def levels_table(figures: dict) -> Table:
    table = Table(title=f"retrieve() in one process, {figures['chunks']} chunks, caches off")
    columns = {
        "callers": None,
        "calls": "calls",
        "calls/s": "throughput_per_s",
        "raw embedder/s": "ceiling_per_s",
        "ratio": "ratio",
        "p50 ms": "p50_ms",
        "p95 ms": "p95_ms",
        "lag p95 ms": "loop_lag_p95_ms",
        "lag max ms": "loop_lag_max_ms",
        "longest GC ms": "gc_pause_max_ms",
        "CPU ms/call: loop": "loop_cpu_ms_per_call",
        "process": "cpu_ms_per_call",
        "MongoDB": "store_cpu_ms_per_call",
        "raw embedder": "ceiling_cpu_ms_per_call",
    }
    for column in columns:
        table.add_column(column, justify="right")
    for callers, level in figures["levels"].items():
        table.add_row(
            callers,
            str(level["calls"]),
            *(
                f"{level[key]:.2f}" if key == "ratio" else f"{level[key]:.1f}"
                for key in list(columns.values())[2:]
            ),
        )
    return table


def threads_table(figures: dict) -> Table:
    busy = int(next(iter(figures["threads"].values()))["busy_callers"])
    table = Table(
        title=f"thread settings, mean of {figures['thread_passes']} processes each "
        f"(calls/s and lag with {busy} callers)"
    )
    columns = {
        "setting": None,
        "search in service p50 ms": "search_in_service_p50_ms",
        "search after embed p50 ms": "search_after_embed_p50_ms",
        "search alone p50 ms": "search_alone_p50_ms",
        "embed p50 ms": "embed_p50_ms",
        "retrieve p50 ms": "retrieve_p50_ms",
        "calls/s": "busy_throughput_per_s",
        "lag p95 ms": "busy_loop_lag_p95_ms",
        "passages/s": "passages_per_s",
    }
    for column in columns:
        table.add_column(column, justify="left" if column == "setting" else "right")
    for name, measured in figures["threads"].items():
        table.add_row(name, *(f"{measured[key]:.2f}" for key in list(columns.values())[1:]))
    return table
