"""``retrieval golden run``: the golden suite on the configured stores and embedding model."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from retrieval.cli.help_values import MAX_TOP_K
from retrieval.cli.progress import stage_progress
from retrieval.cli.runtime import console, run_with_application
from retrieval.errors import InvalidRequestError

if TYPE_CHECKING:
    from retrieval.evaluation.golden_report import GoldenReport
    from retrieval.lifecycle import Application
    from retrieval.service.answers.answer_service import AnswerService
    from retrieval.settings import Settings


async def check_unused(application: Application, namespace: str) -> None:
    """A run deletes its namespace afterwards, so it must not start in one holding data."""
    held = await application.stats.namespace(namespace)
    if held.vector_count or held.chunk_count:
        raise InvalidRequestError(
            f"{namespace!r} already holds data, and a golden run deletes its namespace "
            "when it ends: choose an unused one",
            field="namespace",
        )


def model_answers(answers: AnswerService, settings: Settings) -> AnswerService | None:
    """``answers`` when a chat model is configured; None otherwise, so that the run neither
    calls a model nor reports answer figures."""
    return answers if settings.llm_base_url is not None else None


def summary_table(report: GoldenReport, min_hit_at_5: float) -> Table:
    from retrieval.evaluation.reports import answer_rows, figure

    table = Table(
        title=f"golden suite {report.suite}: {report.samples} samples", title_justify="left"
    )
    for column, justify in [("metric", "left"), ("value", "right"), ("target", "right")]:
        table.add_column(column, justify=justify)
    verdict = "[green]met[/green]" if report.hit_at_5 >= min_hit_at_5 else "[red]missed[/red]"
    table.add_row("hit@5", figure(report.hit_at_5), f">= {min_hit_at_5} {verdict}")
    for name, value in [("recall@5", report.recall_at_5), ("precision@5", report.precision_at_5),
                        ("MRR", report.mrr), ("nDCG@10", report.ndcg_at_10)]:  # fmt: skip
        table.add_row(name, figure(value), "")
    table.add_row("context precision", figure(report.context_precision), "")
    table.add_row("context recall", figure(report.context_recall), "")
    for name, value in answer_rows(report):
        table.add_row(name, value, "")
    table.add_row("retrieve() p50 / p95 ms", f"{report.p50_ms:.1f} / {report.p95_ms:.1f}", "")
    for kind, group in report.by_kind.items():
        table.add_row(f"hit@5 of {kind} ({group.samples})", figure(group.hit_at_5), "")
    return table


def run(
    suite: Path = typer.Option(
        Path("tests/golden/rag"),
        "--suite",
        file_okay=False,
        exists=True,
        help="Suite directory: seed_documents.json and retrieval/samples.json.",
    ),
    namespace: str | None = typer.Option(
        None, help="Unused namespace to seed; default golden-<suite>-<random>."
    ),
    min_hit_at_5: float = typer.Option(0.85, min=0.0, max=1.0, help="Exit 1 below this hit@5."),
    top_k: int = typer.Option(10, min=1, max=MAX_TOP_K, help="Chunks asked for per sample."),
    reports: Path = typer.Option(Path("reports"), help="Where golden.json/.md/.png are written."),
) -> None:
    """Seed the suite into its own namespace, ask every sample, grade, clean up, report."""
    from retrieval.evaluation.ablation import (
        ABLATION_FILE,
        ablation_table,
        ablation_variants,
        latency_ratio,
        write_ablation,
    )
    from retrieval.evaluation.golden import golden_namespace, run_golden
    from retrieval.evaluation.golden_suite import load_suite
    from retrieval.evaluation.reports import write_golden_reports

    async def work(application: Application) -> GoldenReport:
        golden = load_suite(suite, application.settings.allowed_domains)
        target = namespace or golden_namespace(golden.name)
        await check_unused(application, target)
        labels = {
            "seed": f"seeding {len(golden.documents)} documents",
            "ask": "asking samples under every variant",
            "answer": "answering samples with the model",
        }
        with stage_progress(labels) as progress:
            return await run_golden(
                golden,
                application.retrieval,
                application.ingestion,
                application.library,
                namespace=target,
                top_k=top_k,
                variants=ablation_variants(application.settings),
                answers=model_answers(application.answers, application.settings),
                context_tokens=application.settings.answer_context_tokens,
                progress=progress,
            )

    report = run_with_application(work)
    written = write_golden_reports(report, reports, min_hit_at_5)
    write_ablation(reports / ABLATION_FILE, f"golden-{report.suite}", report.ablation)
    written.append(reports / ABLATION_FILE)
    console.print(summary_table(report, min_hit_at_5))
    console.print(ablation_table(f"golden-{report.suite}", report.ablation))
    console.print(latency_ratio(report.ablation))
    for row in report.rows:
        if not row.passed:
            found = ", ".join(f"{d.document_id} {d.score:.3f}" for d in row.returned[:3])
            console.print(f"[red]failed[/red] {row.id} ({row.kind}) {row.query!r}: {found}")
    console.print("written " + ", ".join(str(path) for path in written))
    if report.hit_at_5 < min_hit_at_5:
        raise typer.Exit(code=1)
