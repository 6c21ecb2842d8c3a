from __future__ import annotations

import json
import tempfile
from pathlib import Path

import typer
from rich.table import Table

from retrieval.cli.runtime import console, run
from retrieval.logging import configure_logging
from retrieval_bench.load import LoadProfile, embedded_settings, run_load

DEFAULT = LoadProfile()


def load(
    callers: int = typer.Option(DEFAULT.callers, min=1, help="Concurrent gRPC callers."),
    seconds: float = typer.Option(DEFAULT.seconds, min=0.1, help="Seconds of readers and writers."),
    read_only_seconds: float = typer.Option(
        DEFAULT.read_only_seconds, min=0.1, help="Seconds of readers alone, first, for comparison."
    ),
    write_share: float = typer.Option(
        DEFAULT.write_share,
        min=0,
        max=0.9,
        help="Share of the callers that write (rounded); the others read.",
    ),
    call_timeout: float = typer.Option(
        DEFAULT.call_timeout_s, min=1, help="Longest one call may take (s)."
    ),
    log_level: str = typer.Option("WARNING", help="Log level of the service under load."),
    reports: Path = typer.Option(Path("reports"), help="Where load.json is written."),
) -> None:
    """Readers and writers at once over gRPC on loopback, against the embedded stack in a
    temporary directory: latency, errors, memory, and how much writers slow readers."""
    profile = LoadProfile(callers, seconds, read_only_seconds, write_share, call_timeout)
    with (
        tempfile.TemporaryDirectory(prefix="retrieval-load-") as directory,
        console.status("starting the embedded stack and seeding") as status,
    ):
        settings = embedded_settings(Path(directory), log_level)
        configure_logging(settings.log_level, settings.log_format)
        figures = run(
            run_load(
                settings,
                profile,
                on_phase=lambda name, s: status.update(f"{callers} callers, {name}: {s:g} s"),
            )
        )
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "load.json").write_text(json.dumps(figures, indent=2))
    table = Table(
        title=f"{profile.readers} readers and {profile.writers} writers over gRPC on loopback"
    )
    for column in ("calls", "count", "errors", "p50 ms", "p95 ms"):
        table.add_column(column, justify="left" if column == "calls" else "right")
    table.add_row(
        "reads alone",
        str(figures["reads_alone_requests"]),
        str(figures["reads_alone_errors"]),
        f"{figures['reads_alone_p50_ms']:.0f}",
        f"{figures['reads_alone_p95_ms']:.0f}",
    )
    table.add_row(
        "reads, with writers",
        str(figures["reads_with_writers"]),
        "",
        f"{figures['reads_with_writers_p50_ms']:.0f}",
        f"{figures['reads_with_writers_p95_ms']:.0f}",
    )
    table.add_row(
        "writes",
        str(figures["writes"]),
        "",
        f"{figures['write_p50_ms']:.0f}",
        f"{figures['write_p95_ms']:.0f}",
    )
    table.add_row(
        "all, with writers",
        str(figures["requests"]),
        str(figures["errors"]),
        f"{figures['p50_ms']:.0f}",
        f"{figures['p95_ms']:.0f}",
    )
    console.print(table)
    console.print(
        f"reads with writers / reads alone: p50 x{figures['read_p50_ratio']:.2f}, "
        f"p95 x{figures['read_p95_ratio']:.2f}\n"
        f"{figures['requests_per_s']:.1f} calls/s, p99 {figures['p99_ms']:.0f} ms; "
        f"resident memory {figures['rss_start_mb']:.0f} -> {figures['rss_end_mb']:.0f} MB "
        f"· written {reports / 'load.json'}"
    )
    if figures["errors"] or figures["reads_alone_errors"]:
        console.print(f"[red]errors:[/red] {figures['error_kinds']}")
        raise typer.Exit(code=1)
