"""``retrieval bench peers``: our retrieval beside LangChain, LlamaIndex and Haystack."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import typer
from rich.table import Table

from retrieval.cli.bench_beir import DEFAULT_EMBEDDINGS
from retrieval.cli.progress import stage_progress
from retrieval.cli.runtime import console, load_settings, run
from retrieval.container import Container
from retrieval.errors import RetrievalError
from retrieval.evaluation.beir_data import load_dataset, load_embeddings
from retrieval.evaluation.peer_process import PeerStoppedError
from retrieval.evaluation.side_by_side import (
    REPORT_FILE,
    SideBySide,
    SystemFigures,
    ours_figures,
    peer_commands,
    peer_figures,
    peer_settings,
    run_side_by_side,
    write_report,
)

DEFAULT_PYTHON = Path(".bench-peers") / "bin" / "python"


def figures_row(name: str, figures: SystemFigures, ratio: str) -> list[str]:
    return [
        name,
        f"{figures.ndcg_at_10:.4f}",
        f"{figures.recall_at_100:.4f}",
        f"{figures.p50_ms:.1f}",
        f"{figures.p95_ms:.1f}",
        ratio,
    ]


def side_by_side_table(report: SideBySide, title: str) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("system")
    for column in ("nDCG@10", "Recall@100", "p50 ms", "p95 ms", "ours/peer p95"):
        table.add_column(column, justify="right")
    table.add_row(*figures_row("ours", report.ours, "-"))
    ratios = report.p95_ratios()
    for name, figures in report.peers.items():
        table.add_row(*figures_row(name, figures, f"{ratios[name]:.2f}"))
    return table


def peers(
    data: Path = typer.Option(
        ...,
        "--data",
        exists=True,
        file_okay=False,
        help="BEIR dataset directory: corpus.jsonl, queries.jsonl, qrels/test.tsv.",
    ),
    embeddings: Path | None = typer.Option(
        None, help=f"Passage vectors in corpus order; default DATA/{DEFAULT_EMBEDDINGS}."
    ),
    python: Path = typer.Option(
        DEFAULT_PYTHON, help="The peers' interpreter (`make bench-peers` installs it)."
    ),
    reports: Path = typer.Option(Path("reports"), help=f"Where {REPORT_FILE} is written."),
) -> None:
    """Score our default pipeline and LangChain's, LlamaIndex's and Haystack's hybrid
    retrievers on one BEIR dataset with the same passage and query vectors."""
    if not python.is_file():
        console.print(f"[red]error:[/red] no peers' interpreter at {python}: run make bench-peers")
        raise typer.Exit(code=1)
    try:
        dataset = load_dataset(
            data / "corpus.jsonl", data / "queries.jsonl", data / "qrels" / "test.tsv"
        )
        passages = load_embeddings(embeddings or data / DEFAULT_EMBEDDINGS)
    except RetrievalError as error:
        console.print(f"[red]error:[/red] {error}")
        raise typer.Exit(code=1) from error
    qrels = {qid: dataset.qrels[qid] for qid in dataset.judged_queries}
    container = Container(settings=peer_settings(load_settings(), len(qrels)))
    labels = {
        "check": "re-embedding a sample of the embeddings file",
        "write": "writing chunk texts, vectors and keyword entries",
        "ask": f"asking {len(qrels)} queries of retrieve() and of every peer, in turn",
    }
    with tempfile.TemporaryDirectory(prefix="bench-peers-") as directory:
        commands = peer_commands(python, Path(directory))
        try:
            with stage_progress(labels) as progress:
                work = run_side_by_side(
                    container, dataset, passages, Path(directory), commands,
                    rng=random.Random(), progress=progress,
                )  # fmt: skip
                ours, runs = run(work)
        except PeerStoppedError as error:
            console.print(f"[red]error:[/red] {error}")
            raise typer.Exit(code=1) from error
    report = SideBySide(
        ours=ours_figures(ours),
        peers={system: peer_figures(peer, qrels) for system, peer in runs.items()},
    )
    target = reports / REPORT_FILE
    write_report(target, report)
    title = f"{data.name}: {len(qrels)} queries over {len(dataset.corpus)} documents, top 100"
    console.print(side_by_side_table(report, title))
    embed = ours.latency_ms["embed"]
    console.print(
        f"ours: the query vector came from the query vector cache "
        f"(embed stage p95 {embed['p95']:.2f} ms)"
    )
    for system, ratio in report.p95_ratios().items():
        peer = runs[system]
        console.print(
            f"{system} ({peer.library}; indexes built in {peer.index_s:.1f} s): p95 ours/{system} "
            f"{report.ours.p95_ms:.1f} / {report.peers[system].p95_ms:.1f} ms = {ratio:.2f}"
        )
    console.print(f"written {target}")
