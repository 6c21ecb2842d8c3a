"""A validation report as a person reads it: a summary table, or Markdown."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from retrieval.domain.validation_report import ScoreStatistics, ValidationReport
from retrieval.evaluation.reports import ABSENT, figure, table


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
