from __future__ import annotations

import json
import tempfile
from pathlib import Path

import typer
from rich.progress import Progress
from rich.table import Table

from retrieval.cli.runtime import console, load_settings, run
from retrieval_bench.mcp_overhead import measure

OVERHEAD_TARGET_MS = 5.0


def mcp(
    queries: int = typer.Option(300, help="Queries measured each way (after a warm-up)."),
    calls: int = typer.Option(1000, help="search calls from the concurrent sessions."),
    sessions: int = typer.Option(10, help="MCP sessions calling at once."),
    reports: Path = typer.Option(Path("reports"), help="Where mcp.json is written."),
) -> None:
    """p50 of MCP search from this process to a server process over streamable HTTP and
    over stdio against the same retrieve() in-process, and the errors of concurrent sessions;
    in a data directory of its own."""
    settings = load_settings()
    with (
        tempfile.TemporaryDirectory(prefix="bench-mcp-") as data_dir,
        Progress(console=console, transient=True) as progress,
    ):
        task = progress.add_task(
            f"{queries} queries in-process and over MCP HTTP, then stdio", total=2 * queries
        )
        figures = run(
            measure(
                settings.model_copy(update={"data_dir": Path(data_dir)}),
                queries=queries,
                calls=calls,
                sessions=sessions,
                on_query=lambda: progress.advance(task),
            )
        )
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "mcp.json").write_text(json.dumps(figures, indent=2))
    table = Table(title=f"search, {figures['queries']} queries over {figures['chunks']} chunks")
    table.add_column("path")
    table.add_column("p50 ms", justify="right")
    for label, key in (("in-process", "inproc"), ("MCP, HTTP", "http"), ("MCP, stdio", "stdio")):
        table.add_row(label, f"{figures[f'{key}_p50_ms']:.2f}")
    console.print(table)
    console.print(
        f"overhead p50: HTTP {figures['search_overhead_p50_ms']:.2f} ms, stdio "
        f"{figures['stdio_overhead_p50_ms']:.2f} ms (target <= {OVERHEAD_TARGET_MS} ms); "
        f"processor a call over HTTP: client {figures['http_client_cpu_p50_ms']:.2f} ms, "
        f"server {figures['server_overhead_cpu_per_call_ms']:.2f} ms besides retrieval; "
        f"errors {figures['errors']} of {calls} calls from {sessions} sessions (target 0) · "
        f"written {reports / 'mcp.json'}"
    )
    if figures["errors"]:
        raise typer.Exit(code=1)
