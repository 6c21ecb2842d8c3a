"""``retrieval validate``: grade how a served namespace answers its own questions."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from retrieval.cli.help_values import MAX_TOP_K, VALIDATION_TOP_K
from retrieval.cli.runtime import console, failed, run_here_or_served
from retrieval.errors import InvalidRequestError, RetrievalError

if TYPE_CHECKING:
    from retrieval.cli.served import ApplicationCalls
    from retrieval.domain.validation import CaseFile, ValidationRequest
    from retrieval.domain.validation_report import ValidationReport


def load_cases(path: Path) -> CaseFile:
    from retrieval.domain.validation import parse_case_file

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
    from retrieval.domain.models import validated
    from retrieval.domain.validation import ValidationRequest

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
        VALIDATION_TOP_K, "--top-k", "-k", min=1, max=MAX_TOP_K, help="Matches asked per query."
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
        failed(str(error))
    from retrieval.cli.validation_report import summary_table, validation_markdown

    async def work(app: ApplicationCalls) -> ValidationReport:
        return await app.validation.validate(request)

    report = run_here_or_served(work, read_only=True)
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
