"""``retrieval bench cli``: how long the command line takes to answer, each run a process of
its own, as a person types the commands."""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.table import Table

from retrieval.cli.environment import REFUSED
from retrieval.cli.runtime import console

TARGET_S = 0.5
SERVE_START_S = 120.0
NAMESPACE = "bench-cli"
NOTE = """---
title: Withering
domain: plant_diseases
---
# Withering

Fresh leaf is withered on troughs until it loses about a third of its moisture.
"""
ANSWERED_AT_ONCE = {
    "retrieval --help": (("--help",), 0),
    "retrieval query --help": (("query", "--help"), 0),
    "retrieval query x --top-k 0": (("query", "x", "--top-k", "0"), REFUSED),
}
"""Commands that start nothing, with the exit code each must end with."""
FIRST_QUERY = ("query", "How is fresh leaf withered?", "-n", NAMESPACE, "-k", "1")
RETRIEVAL = str(Path(sys.executable).with_name("retrieval"))
"""The ``retrieval`` command installed beside this Python."""


def isolated(directory: Path) -> dict[str, str]:
    """The environment without RETRIEVAL_* settings, so that the embedded stores start in
    ``directory``, with bytecode compiled once and cached there, as an installed command has."""
    environment = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("RETRIEVAL_") and name != "PYTHONDONTWRITEBYTECODE"
    }
    return environment | {
        "RETRIEVAL_DATA_DIR": str(directory / "data"),
        "PYTHONPYCACHEPREFIX": str(directory / "bytecode"),
    }


def run_once(
    arguments: Sequence[str], expected: int, environment: Mapping[str, str]
) -> tuple[float, float]:
    """Wall and CPU seconds of ``retrieval ARGUMENTS``, which must end with ``expected``; the
    CPU time tells a slow command from a busy machine."""
    command = [RETRIEVAL, *arguments]
    cpu_before = children_cpu_s()
    started = time.perf_counter()
    done = subprocess.run(command, env=environment, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != expected:
        console.print(
            f"[red]error:[/red] {' '.join(command)} ended with {done.returncode}, "
            f"not {expected}:\n{done.stdout}{done.stderr}"
        )
        raise typer.Exit(code=1)
    return wall, children_cpu_s() - cpu_before


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(
    arguments: Sequence[str], expected: int, environment: Mapping[str, str], rounds: int
) -> dict:
    """Times of ``rounds`` runs after an untimed one that compiles and caches bytecode."""
    run_once(arguments, expected, environment)
    runs = [run_once(arguments, expected, environment) for _ in range(rounds)]
    return {
        "argv": ["retrieval", *arguments],
        "median_s": statistics.median(wall for wall, _ in runs),
        "median_cpu_s": statistics.median(cpu for _, cpu in runs),
        "runs_s": [wall for wall, _ in runs],
    }


def cli(
    rounds: int = typer.Option(5, min=1, help="Timed runs of each command, after a warm-up."),
    reports: Path = typer.Option(Path("reports"), help="Where cli.json is written."),
) -> None:
    """Median wall time of `retrieval --help`, `retrieval query --help` and a refused request
    against the 0.5 s target, of a first query (stores started, model loaded) on a
    one-document namespace, in a temporary data directory, and of the same query while
    `retrieval serve` holds that directory (sent to the server)."""
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as directory:
        environment = isolated(Path(directory))
        note = Path(directory) / "withering.md"
        note.write_text(NOTE)
        with console.status("timing commands that start nothing"):
            commands = {
                name: against_target(timed(arguments, expected, environment, rounds))
                for name, (arguments, expected) in ANSWERED_AT_ONCE.items()
            }
        with console.status("ingesting one document, then timing first queries"):
            run_once(("ingest", str(note), "-n", NAMESPACE), 0, environment)
            first_query = timed(FIRST_QUERY, 0, environment, rounds)
        with (
            console.status("timing queries sent to a running retrieval serve"),
            serving(environment, Path(directory) / "data"),
        ):
            served_query = timed(FIRST_QUERY, 0, environment, rounds)
    report = {
        "target_s": TARGET_S,
        "rounds": rounds,
        "commands": commands,
        "first_query": first_query,
        "served_query": served_query,
    }
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "cli.json").write_text(json.dumps(report, indent=2))
    console.print(commands_table(commands, rounds))
    console.print(
        f"first query, a fresh process starting the stores and the model: median "
        f"{first_query['median_s']:.2f} s (CPU {first_query['median_cpu_s']:.2f} s)\n"
        f"a query sent to a running retrieval serve: median {served_query['median_s']:.2f} s "
        f"(CPU {served_query['median_cpu_s']:.2f} s) · written {reports / 'cli.json'}"
    )


@contextmanager
def serving(environment: Mapping[str, str], data_dir: Path) -> Iterator[None]:
    """``retrieval serve`` on ``data_dir`` on a free port, from once it records where it
    listens until it is stopped."""
    from retrieval.grpc.serving_record import serving_record

    command = [RETRIEVAL, "serve"]
    server = subprocess.Popen(
        command, env={**environment, "RETRIEVAL_GRPC_PORT": "0"}, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + SERVE_START_S
        while serving_record(data_dir) is None:
            if server.poll() is not None or time.monotonic() > deadline:
                console.print("[red]error:[/red] retrieval serve did not start")
                raise typer.Exit(code=1)
            time.sleep(0.1)
        yield
    finally:
        server.terminate()
        server.wait()


def against_target(figures: dict) -> dict:
    median = figures["median_s"]
    return figures | {"ratio": median / TARGET_S, "met": median < TARGET_S}


def commands_table(commands: Mapping[str, dict], rounds: int) -> Table:
    table = Table(title=f"wall time, median of {rounds} runs", title_justify="left")
    table.add_column("command")
    for column in ("median s", "CPU s", "target s", "ratio", "verdict"):
        table.add_column(column, justify="right", no_wrap=True)
    for name, figures in commands.items():
        verdict = "[green]met[/green]" if figures["met"] else "[red]missed[/red]"
        table.add_row(
            name,
            f"{figures['median_s']:.3f}",
            f"{figures['median_cpu_s']:.3f}",
            f"< {TARGET_S}",
            f"{figures['ratio']:.2f}",
            verdict,
        )
    return table
