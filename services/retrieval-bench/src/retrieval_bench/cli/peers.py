"""``retrieval bench peers``: our retrieval beside LangChain, LlamaIndex and Haystack, each in
every configuration it offers."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import typer
from rich.table import Table

from retrieval.cli.progress import stage_progress
from retrieval.cli.runtime import console, load_settings, run
from retrieval.container import Container
from retrieval.domain.stage_names import StageName
from retrieval.errors import RetrievalError
from retrieval_bench.beir.data import default_dataset_name, load_dataset, load_embeddings
from retrieval_bench.cli.beir import DEFAULT_EMBEDDINGS, dataset_name
from retrieval_bench.peers.process import PeerStoppedError
from retrieval_bench.peers.side_by_side import (
    BEST,
    SideBySide,
    columns,
    figure_rows,
    peer_commands,
    peer_settings,
    report_file,
    run_side_by_side,
    side_by_side,
    write_report,
)

DEFAULT_PYTHON = Path(".bench-peers") / "bin" / "python"


def side_by_side_table(report: SideBySide) -> Table:
    """Ours and each library in its default and its best configuration, in 80 columns."""
    table = Table(
        title=f"{report.dataset}: {report.queries} queries over {report.documents:,} documents, "
        "top 100",
        title_justify="left",
        caption=f"Each library in its default configuration, then ({BEST}) in its best by "
        "nDCG@10; p95 of the search alone.",
        caption_justify="left",
        box=None,
        collapse_padding=True,
        pad_edge=False,
    )
    table.add_column("system")
    table.add_column("configuration")
    for column in columns(report):
        table.add_column(column, justify="right")
    for row in figure_rows(report):
        table.add_row(*row)
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
    name: str | None = typer.Option(
        None,
        callback=dataset_name,
        help="Dataset name: report file; default: DATA's folder name.",
    ),
    reports: Path = typer.Option(Path("reports"), help="Where peers-<name>.json is written."),
) -> None:
    """Score our default pipeline and LangChain's, LlamaIndex's and Haystack's hybrid
    retrievers, each in every configuration it offers, on one BEIR dataset with the same
    passage and query vectors."""
    if not python.is_file():
        console.print(f"[red]error:[/red] no peers' interpreter at {python}: run make bench-peers")
        raise typer.Exit(code=1)
    name = name or dataset_name(default_dataset_name(data))
    try:
        dataset = load_dataset(
            data / "corpus.jsonl", data / "queries.jsonl", data / "qrels" / "test.tsv"
        )
        passages = load_embeddings(embeddings or data / DEFAULT_EMBEDDINGS)
    except RetrievalError as error:
        console.print(f"[red]error:[/red] {error}")
        raise typer.Exit(code=1) from error
    queries = len(dataset.judged_queries)
    container = Container(settings=peer_settings(load_settings(), queries))
    with tempfile.TemporaryDirectory(prefix="bench-peers-") as directory:
        commands = peer_commands(python, Path(directory))
        labels = {
            "check": "re-embedding a sample of the embeddings file",
            "write": "writing chunk texts, vectors and keyword entries",
            "ask": f"asking {queries} queries of retrieve() and of {len(commands)} peers, in turn",
        }
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
    report = side_by_side(name, dataset, ours, runs)
    target = reports / report_file(name)
    write_report(target, report)
    console.print(side_by_side_table(report))
    embed = ours.latency_ms[StageName.EMBED]
    console.print(
        "ours: each query's vector was put in the query vector cache before its timed call "
        f"(embed stage p50 {embed['p50']:.2f} ms, p95 {embed['p95']:.2f} ms)"
    )
    ndcg, p95 = report.ratios("ndcg_at_10"), report.ratios("p95_ms")
    for system, peer in report.peers.items():
        best = peer.configurations[peer.best]
        console.print(
            f"{system} ({peer.library}; indexes built in "
            f"{runs[f'{system}/{peer.best}'].index_s:.1f} s), ours over its best, {peer.best} "
            f"(of {len(peer.configurations)}): nDCG@10 {report.ours.ndcg_at_10:.4f} / "
            f"{best.ndcg_at_10:.4f} = {ndcg[system]:.3f}, p95 {report.ours.p95_ms:.1f} / "
            f"{best.p95_ms:.1f} ms = {p95[system]:.2f}"
        )
    console.print(f"written {target}")
