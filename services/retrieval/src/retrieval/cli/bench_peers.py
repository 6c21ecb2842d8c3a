"""``retrieval bench peers``: our retrieval beside LangChain, LlamaIndex and Haystack."""

from __future__ import annotations

import random
import subprocess
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
from retrieval.evaluation.side_by_side import (
    PEERS,
    REPORT_FILE,
    PeerRun,
    SideBySide,
    SystemFigures,
    ours_figures,
    peer_figures,
    peer_settings,
    run_ours,
    run_peer,
    write_peer_input,
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


def side_by_side_table(report: SideBySide, runs: dict[str, PeerRun], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("system")
    for column in ("nDCG@10", "Recall@100", "p50 ms", "p95 ms", "ours/peer p95"):
        table.add_column(column, justify="right")
    table.add_row(*figures_row("ours (hybrid, DBSF)", report.ours, "-"))
    ratios = report.p95_ratios()
    for name, figures in report.peers.items():
        table.add_row(
            *figures_row(f"{name} ({runs[name].library})", figures, f"{ratios[name]:.2f}")
        )
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
        "ask": f"asking {len(qrels)} queries through retrieve()",
    }
    with stage_progress(labels) as progress:
        ours, queries = run(
            run_ours(container, dataset, passages, rng=random.Random(), progress=progress)
        )
    runs: dict[str, PeerRun] = {}
    with tempfile.TemporaryDirectory(prefix="bench-peers-") as directory:
        write_peer_input(Path(directory), dataset, passages, queries)
        for system in PEERS:
            with console.status(f"{system}: indexing and asking {len(qrels)} queries"):
                try:
                    runs[system] = run_peer(python, system, Path(directory))
                except subprocess.CalledProcessError as error:
                    console.print(f"[red]error:[/red] the {system} run failed ({error})")
                    raise typer.Exit(code=1) from error
    report = SideBySide(
        ours=ours_figures(ours),
        peers={system: peer_figures(peer, qrels) for system, peer in runs.items()},
    )
    target = reports / REPORT_FILE
    write_report(target, report)
    title = f"{data.name}: {len(qrels)} queries over {len(dataset.corpus)} documents, top 100"
    console.print(side_by_side_table(report, runs, title))
    embed = ours.latency_ms["embed"]
    console.print(
        f"ours: the query vector came from the query vector cache "
        f"(embed stage p95 {embed['p95']:.2f} ms)"
    )
    for system, ratio in report.p95_ratios().items():
        console.print(
            f"p95 ours/{system}: {report.ours.p95_ms:.1f} / {report.peers[system].p95_ms:.1f} ms "
            f"= {ratio:.2f}; {system} built its indexes in {runs[system].index_s:.1f} s"
        )
    console.print(f"written {target}")
