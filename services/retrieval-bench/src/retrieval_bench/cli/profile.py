"""``retrieval bench profile``: stage timings of retrieve() top 100 on a BEIR dataset, and the
hot functions of this process and of the embedded MongoDB server, sampled by py-spy."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from retrieval.cli.progress import stage_progress
from retrieval.cli.runtime import console, load_settings, run
from retrieval.container import Container
from retrieval.errors import RetrievalError
from retrieval_bench.beir.data import load_dataset, load_embeddings
from retrieval_bench.cli.beir import DEFAULT_EMBEDDINGS
from retrieval_bench.profile import (
    ProcessProfile,
    ProfileReport,
    profile_retrieval,
    profile_settings,
)

REPORT_FILE = "profile.json"


def stages_table(report: ProfileReport) -> Table:
    table = Table(
        title=f"retrieve() top {report.top_k}: {report.queries} calls over "
        f"{report.documents} documents",
        title_justify="left",
    )
    for column in ("stage", "p50 ms", "p95 ms", "max ms"):
        table.add_column(column, justify="left" if column == "stage" else "right")
    for stage, spread in report.latency_ms.items():
        table.add_row(stage, f"{spread['p50']:.2f}", f"{spread['p95']:.2f}", f"{spread['max']:.2f}")
    return table


def frames_table(name: str, profile: ProcessProfile, rows: int) -> Table:
    table = Table(title=f"{name}: {profile.samples} samples, by own time", title_justify="left")
    for column in ("own %", "total %", "function"):
        table.add_column(column, justify="left" if column == "function" else "right")
    for frame in profile.by_own[:rows]:
        table.add_row(f"{frame.own:.1%}", f"{frame.total:.1%}", frame.function)
    return table


def profile(
    data: Path = typer.Option(
        ..., "--data", exists=True, file_okay=False, help="BEIR dataset directory."
    ),
    queries: Path | None = typer.Option(None, help="Queries; default DATA/queries.jsonl."),
    qrels: Path | None = typer.Option(None, help="Judgements; default DATA/qrels/test.tsv."),
    embeddings: Path | None = typer.Option(
        None, help=f"Passage vectors in corpus order; default DATA/{DEFAULT_EMBEDDINGS}."
    ),
    rounds: int = typer.Option(1, min=1, help="Times every judged query is asked and timed."),
    sample: bool = typer.Option(
        True, "--py-spy/--no-py-spy", help="Sample both processes with py-spy (if installed)."
    ),
    rows: int = typer.Option(15, min=1, help="Hot functions printed per process."),
    reports: Path = typer.Option(
        Path("reports/profile"), help=f"Where {REPORT_FILE} and py-spy's stacks are written."
    ),
) -> None:
    """Where retrieve() of the top 100 spends its time: each stage's p50/p95 with the default
    settings, and py-spy's hot functions in this process and in the embedded MongoDB."""
    try:
        dataset = load_dataset(
            data / "corpus.jsonl",
            queries or data / "queries.jsonl",
            qrels or data / "qrels" / "test.tsv",
        )
        vectors = load_embeddings(embeddings or data / DEFAULT_EMBEDDINGS)
    except RetrievalError as error:
        console.print(f"[red]error:[/red] {error}")
        raise typer.Exit(code=1) from error
    reports.mkdir(parents=True, exist_ok=True)
    container = Container(settings=profile_settings(load_settings(), len(dataset.judged_queries)))
    calls = len(dataset.judged_queries) * rounds
    labels = {
        "write": f"writing {len(dataset.corpus)} documents",
        "warm": "asking every query once (query vectors cached)",
        "ask": f"timing {calls} calls",
        "sample": "asking every query once more under py-spy",
    }
    with stage_progress(labels) as progress:
        report = run(
            profile_retrieval(
                container, dataset, vectors, reports,
                rounds=rounds, sample=sample, progress=progress,
            )
        )  # fmt: skip
    target = reports / REPORT_FILE
    target.write_text(json.dumps(report.model_dump(mode="json"), indent=2))
    console.print(stages_table(report))
    console.print(
        "CPU time per call: "
        + ", ".join(f"{name} {ms:.2f} ms" for name, ms in report.cpu_ms_per_call.items())
    )
    for name, process in report.processes.items():
        console.print(frames_table(name, process, rows))
    unsampled = sorted(set(report.cpu_ms_per_call) - set(report.processes))
    if sample and unsampled:
        console.print(
            f"no py-spy profile of {', '.join(unsampled)}: py-spy is not installed (uv sync "
            "installs it) or may not attach to a process here"
        )
    console.print(f"written {target}")
