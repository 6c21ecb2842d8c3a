"""``retrieval validate``: grade how a served namespace answers its own questions."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from retrieval.cli.runtime import console, run_with_application
from retrieval.container import Application
from retrieval.domain.models import MAX_TOP_K, validated
from retrieval.domain.validation import (
    DEFAULT_TOP_K,
    CaseFile,
    ScoreStatistics,
    ValidationReport,
    ValidationRequest,
    parse_case_file,
)
from retrieval.errors import InvalidRequestError, RetrievalError
from retrieval.evaluation.reports import ABSENT, figure, table


def load_cases(path: Path) -> CaseFile:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise InvalidRequestError(f"{path} is not UTF-8 text", field="cases") from error
    except OSError as error:
        raise InvalidRequestError(f"cannot read {path}: {error.strerror}", field="cases") from error
    return parse_case_file(text)


def metadata_fields(option: str | None) -> tuple[str, ...]:
    return tuple(name.strip() for name in (option or "").split(",") if name.strip())


def validation_request(
    namespace: str,
    cases: Path | None,
    expect_metadata: str | None,
    success_rate: float | None,
    top_k: int,
) -> ValidationRequest:
    """The request the options describe; the option wins over the case file's
    ``expected_metadata``."""
    suite = load_cases(cases) if cases is not None else None
    return validated(
        ValidationRequest,
        namespace=namespace,
        cases=suite.cases if suite is not None else (),
        expected_metadata=metadata_fields(expect_metadata)
        or (suite.expected_metadata if suite is not None else ()),
        success_criterion=success_rate,
        top_k=top_k,
    )


def spread(scores: ScoreStatistics) -> str:
    if not scores.count:
        return ABSENT
    return " / ".join(
        figure(value) for value in (scores.mean, scores.median, scores.min, scores.max)
    )


def completeness(report: ValidationReport) -> str:
    fields = ", ".join(
        f"{name} {figure(share)}" for name, share in report.metadata_field_completeness.items()
    )
    return f"{figure(report.metadata_completeness)} ({fields or 'no fields'})"


def summary_rows(report: ValidationReport) -> list[list[str]]:
    """Each figure of a report as a metric name and its value, in plain text."""
    verdict = "met" if report.passed else "MISSED"
    target = f"target >= {report.success_criterion}: {verdict}"
    return [
        ["queries", f"{report.total_queries} ({report.source.value}), top_k {report.top_k}"],
        ["passed", str(report.passed_queries)],
        ["success rate", f"{figure(report.success_rate)} ({target})"],
        *[
            [f"success rate of {kind} ({group.total})", figure(group.success_rate)]
            for kind, group in report.by_query_type.items()
        ],
        ["top cosine mean / median / min / max", spread(report.top_score)],
        ["vectors / chunks", f"{report.vector_count} / {report.chunk_count}"],
        ["metadata completeness", completeness(report)],
    ]


def summary_table(report: ValidationReport) -> Table:
    shown = Table(title=f"validation of namespace {report.namespace}", title_justify="left")
    shown.add_column("metric", justify="left")
    shown.add_column("value", justify="right")
    for name, value in summary_rows(report):
        shown.add_row(escape(name), escape(value))
    return shown


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def failed_table(report: ValidationReport) -> list[str]:
    if not report.failed_queries:
        return ["None: every query passed."]
    return table(
        "| id | type | query | top cosine | reasons |",
        [
            [
                cell(outcome.id),
                outcome.query_type.value,
                cell(outcome.query),
                figure(outcome.top_score),
                cell("; ".join(outcome.reasons)),
            ]
            for outcome in report.failed_queries
        ],
    )


def validation_markdown(report: ValidationReport) -> str:
    lines = [
        f"# Validation of namespace `{report.namespace}`",
        "",
        *table("| metric | value |", summary_rows(report)),
        "",
        "## Problems",
        "",
        *([f"- {cell(problem)}" for problem in report.problems] or ["None."]),
        "",
        "## Failed queries",
        "",
        *failed_table(report),
    ]
    return "\n".join(lines) + "\n"


def validate(
    namespace: str = typer.Option(..., "--namespace", "-n", help="Namespace to validate."),
    cases: Path | None = typer.Option(
        None,
        "--cases",
        exists=True,
        dir_okay=False,
        help="JSON case file; without it, each document's title must find that document.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    top_k: int = typer.Option(
        DEFAULT_TOP_K, "--top-k", "-k", min=1, max=MAX_TOP_K, help="Matches asked per query."
    ),
    success_rate: float | None = typer.Option(
        None,
        "--success-rate",
        min=0.0,
        max=1.0,
        help="Share of queries that must pass (default RETRIEVAL_VALIDATION_SUCCESS_RATE).",
    ),
    expect_metadata: str | None = typer.Option(
        None,
        "--expect-metadata",
        help="Comma-separated metadata fields every chunk should carry (default: the case "
        "file's expected_metadata, else every key seen).",
    ),
    markdown: Path | None = typer.Option(
        None, "--markdown", dir_okay=False, help="Also write the report as Markdown here."
    ),
) -> None:
    """Ask a namespace its questions as agents ask them and grade the answers; the exit code
    is 1 when fewer than the success rate pass."""

    try:
        request = validation_request(namespace, cases, expect_metadata, success_rate, top_k)
    except RetrievalError as error:
        console.print(f"[red]error:[/red] {escape(str(error))}")
        raise typer.Exit(code=1) from error

    async def work(app: Application) -> ValidationReport:
        return await app.validation.validate(request)

    report = run_with_application(work)
    if markdown is not None:
        markdown.parent.mkdir(parents=True, exist_ok=True)
        markdown.write_text(validation_markdown(report))
    if as_json:
        print(report.model_dump_json(indent=2))
    else:
        console.print(summary_table(report))
        for problem in report.problems:
            console.print(f"[red]problem[/red] {escape(problem)}")
        for outcome in report.failed_queries:
            console.print(
                f"[red]failed[/red] {escape(outcome.id)} ({outcome.query_type.value}) "
                f"{escape(repr(outcome.query))}: {escape('; '.join(outcome.reasons))}"
            )
        if markdown is not None:
            console.print(f"written {markdown}")
    if not report.passed:
        raise typer.Exit(code=1)
