"""``retrieval bench cli``: how long the command line takes to answer, each run a process of
its own, as a person types the commands: on a quiet machine, and with every core but one
kept busy by a CPU burner."""

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
from dataclasses import dataclass
from pathlib import Path

import typer
from rich.table import Table

from retrieval.cli.environment import REFUSED
from retrieval.cli.runtime import console

SPIN = "while True: pass"
"""What a CPU burner runs: one core kept busy until it is killed."""
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
QUESTIONS = {
    "query": FIRST_QUERY,
    "ask": ("ask", "How is fresh leaf withered?", "-n", NAMESPACE),
}
"""The commands timed through the server the command line starts."""
WARM_FIRST_TARGET_S = 4.0
WARM_NEXT_TARGET_S = 1.0
MODEL_SETTINGS = "RETRIEVAL_LLM_"
IN_PROCESS = {"RETRIEVAL_WARM_SERVER": "0"}
RETRIEVAL = str(Path(sys.executable).with_name("retrieval"))
"""The ``retrieval`` command installed beside this Python."""


@dataclass(frozen=True)
class Load:
    """What else the machine runs while the commands that start nothing are timed."""

    name: str
    target_s: float
    burners: int
    """CPU burners spinning beside the commands, one core each."""

    @property
    def described(self) -> str:
        if not self.burners:
            return "a quiet machine"
        return f"{self.burners} CPU burner{'s' if self.burners > 1 else ''} on every core but one"


def loads(cores: int) -> tuple[Load, Load]:
    """A quiet machine (target 0.3 s), then one whose every core but one spins (target 0.5 s)."""
    return Load("quiet", 0.3, 0), Load("busy", 0.5, max(cores - 1, 0))


@contextmanager
def cpu_burners(count: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``count`` child processes spinning on a core each, killed and reaped when the block
    ends, however it ends."""
    burners: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(count):
            burners.append(subprocess.Popen([sys.executable, "-c", SPIN]))
        yield burners
    finally:
        for burner in burners:
            burner.kill()
        for burner in burners:
            burner.wait()


def isolated(directory: Path) -> dict[str, str]:
    """The environment without RETRIEVAL_* settings but the model's (RETRIEVAL_LLM_*), so that
    the embedded stores start in ``directory``, with bytecode compiled once and cached there,
    as an installed command has."""
    environment = {
        name: value
        for name, value in os.environ.items()
        if (not name.startswith("RETRIEVAL_") or name.startswith(MODEL_SETTINGS))
        and name != "PYTHONDONTWRITEBYTECODE"
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
    following: int = typer.Option(
        10, min=1, help="Consecutive calls of each question after the one starting the server."
    ),
    reports: Path = typer.Option(Path("reports"), help="Where cli.json is written."),
) -> None:
    """Median wall time of `retrieval --help`, `retrieval query --help` and a refused request,
    on a quiet machine against the 0.3 s target and with a CPU burner on every core but one
    against the 0.5 s target; of a query run in its own process (RETRIEVAL_WARM_SERVER=0:
    stores started, model loaded) on a one-document namespace, in a temporary data directory;
    and, through the server the command line starts, of the first query (it starts the server,
    target 4 s) and the median of the next ones (target 1 s), the same for `ask` when
    RETRIEVAL_LLM_MODEL is set."""
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as directory:
        environment = isolated(Path(directory))
        in_process = environment | IN_PROCESS
        note = Path(directory) / "withering.md"
        note.write_text(NOTE)
        commands = {
            load.name: timed_under(load, in_process, rounds)
            for load in loads(len(os.sched_getaffinity(0)))
        }
        with console.status("ingesting one document, then timing queries in their process"):
            run_once(("ingest", str(note), "-n", NAMESPACE), 0, in_process)
            own_process = timed(FIRST_QUERY, 0, in_process, rounds)
        warm = {
            name: warm_figures(arguments, environment, following)
            for name, arguments in QUESTIONS.items()
            if name != "ask" or MODEL_SETTINGS + "MODEL" in environment
        }
    report = {
        "rounds": rounds,
        "commands": commands,
        "query_in_its_process": own_process,
        "through_the_warm_server": warm,
    }
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "cli.json").write_text(json.dumps(report, indent=2))
    for timings in commands.values():
        console.print(commands_table(timings, rounds))
    console.print(
        f"a query in its own process (RETRIEVAL_WARM_SERVER=0), starting the stores and the "
        f"model: median {own_process['median_s']:.2f} s (CPU {own_process['median_cpu_s']:.2f} s)"
    )
    console.print(warm_table(warm, following))
    if "ask" not in warm:
        console.print("ask: skipped, no model is configured (RETRIEVAL_LLM_MODEL is unset)")
    console.print(f"written {reports / 'cli.json'}")


def warm_figures(arguments: Sequence[str], environment: Mapping[str, str], following: int) -> dict:
    """The first call of ``arguments``, which starts a server, then ``following`` calls sent
    to it; the server is stopped before and after."""
    with console.status(f"timing retrieval {arguments[0]} through the server it starts"):
        run_once(("stop",), 0, environment)
        try:
            first, _ = run_once(arguments, 0, environment)
            runs = [run_once(arguments, 0, environment) for _ in range(following)]
        finally:
            run_once(("stop",), 0, environment)
    median = statistics.median(wall for wall, _ in runs)
    return {
        "argv": ["retrieval", *arguments],
        "first_s": first,
        "first_met": first <= WARM_FIRST_TARGET_S,
        "median_s": median,
        "median_cpu_s": statistics.median(cpu for _, cpu in runs),
        "median_met": median <= WARM_NEXT_TARGET_S,
        "runs_s": [wall for wall, _ in runs],
    }


def warm_table(warm: Mapping[str, dict], following: int) -> Table:
    table = Table(
        title=f"through the server the command line starts: the first call, then the median "
        f"of {following}",
        title_justify="left",
    )
    table.add_column("command")
    for column in ("first s", "target s", "median s", "CPU s", "target s", "verdict"):
        table.add_column(column, justify="right", no_wrap=True)
    for name, figures in warm.items():
        met = figures["first_met"] and figures["median_met"]
        table.add_row(
            name,
            f"{figures['first_s']:.2f}",
            f"<= {WARM_FIRST_TARGET_S}",
            f"{figures['median_s']:.3f}",
            f"{figures['median_cpu_s']:.3f}",
            f"<= {WARM_NEXT_TARGET_S}",
            "[green]met[/green]" if met else "[red]missed[/red]",
        )
    return table


def timed_under(load: Load, environment: Mapping[str, str], rounds: int) -> dict:
    """The commands that start nothing, each timed as ``timed`` does, under ``load``."""
    status = console.status(f"timing commands that start nothing, {load.described}")
    with status, cpu_burners(load.burners):
        commands = {
            name: against_target(timed(arguments, expected, environment, rounds), load)
            for name, (arguments, expected) in ANSWERED_AT_ONCE.items()
        }
    return {
        "load": load.described,
        "burners": load.burners,
        "target_s": load.target_s,
        "commands": commands,
    }


def against_target(figures: dict, load: Load) -> dict:
    median = figures["median_s"]
    return figures | {"ratio": median / load.target_s, "met": median < load.target_s}


def commands_table(timings: dict, rounds: int) -> Table:
    table = Table(
        title=f"wall time, median of {rounds} runs, {timings['load']}", title_justify="left"
    )
    table.add_column("command")
    for column in ("median s", "CPU s", "target s", "ratio", "verdict"):
        table.add_column(column, justify="right", no_wrap=True)
    for name, figures in timings["commands"].items():
        verdict = "[green]met[/green]" if figures["met"] else "[red]missed[/red]"
        table.add_row(
            name,
            f"{figures['median_s']:.3f}",
            f"{figures['median_cpu_s']:.3f}",
            f"< {timings['target_s']}",
            f"{figures['ratio']:.2f}",
            verdict,
        )
    return table
