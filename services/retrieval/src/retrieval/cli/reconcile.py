"""``retrieval reconcile``: find and repair what an interrupted write left behind."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from rich.table import Table

from retrieval.cli.runtime import (
    console,
    load_settings,
    refused_when_invalid,
    run_with_application,
)

if TYPE_CHECKING:
    from retrieval.lifecycle import Application
    from retrieval.service.ingestion.reconciliation import ReconcileReport


def reconcile(
    namespace: str = typer.Option(..., "--namespace", "-n", help="Namespace to check."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Report only; change nothing."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Find and repair vectors or keyword entries without texts, texts without them, stale
    chunks and half-ingested documents; the exit code is 1 if anything is left to repair."""
    from retrieval.domain.models import check_slug

    settings = load_settings()
    with refused_when_invalid():
        check_slug(namespace, "namespace")

    async def work(app: Application) -> ReconcileReport:
        return await app.repair.reconcile(namespace, dry_run=dry_run)

    report = run_with_application(work, settings, read_only=dry_run)
    if as_json:
        print(report.model_dump_json(indent=2))
    else:
        table = Table(title=f"namespace {namespace}" + (" (dry run)" if dry_run else ""))
        table.add_column("found", justify="left")
        table.add_column("count", justify="right")
        for field, value in report.model_dump().items():
            if isinstance(value, int) and not isinstance(value, bool):
                table.add_row(field.replace("_", " "), str(value))
        console.print(table)
        for kind in ("busy_documents", "incomplete_documents"):
            names = getattr(report, kind)
            if names:
                console.print(f"{kind.replace('_', ' ')}: {', '.join(names)}")
    left = report.busy_documents or report.incomplete_documents
    if (dry_run and not report.is_consistent) or left:
        raise typer.Exit(code=1)
