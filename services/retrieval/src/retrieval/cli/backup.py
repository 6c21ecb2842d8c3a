"""``retrieval backup`` and ``retrieval restore``: a namespace to one file and back
(docs/operations.md), sent to the ``retrieval serve`` holding the data directory if one does."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from retrieval.cli.runtime import console, load_settings, refused_when_invalid, run_here_or_served

if TYPE_CHECKING:
    from pydantic import BaseModel

    from retrieval.cli.served import ApplicationCalls
    from retrieval.service.backup.backups import BackupReport, RestoreReport

AS_JSON = typer.Option(False, "--json", help="Print the report as JSON.")


def backup(
    file: Path = typer.Argument(..., help="The backup file to write (gzip'd JSON lines)."),
    namespace: str = typer.Option(..., "--namespace", "-n", help="Namespace to back up."),
    as_json: bool = AS_JSON,
) -> None:
    """Write a namespace's documents, chunk texts, vectors and ledger to one checksummed
    file; the exit code is 1 if a document had lost chunk texts and was left out."""
    from retrieval.domain.models import check_slug

    settings = load_settings()
    with refused_when_invalid():
        check_slug(namespace, "namespace")

    async def work(app: ApplicationCalls) -> BackupReport:
        return await app.backups.backup(namespace, file)

    report = run_here_or_served(work, settings, read_only=True)
    show(report, f"backup of {namespace} to {file}", as_json)
    if report.left_out:
        console.print(f"left out (run `retrieval reconcile`): {', '.join(report.left_out)}")
        raise typer.Exit(code=1)


def restore(
    file: Path = typer.Argument(..., help="The backup file to restore."),
    namespace: str | None = typer.Option(
        None, "--namespace", "-n", help="Namespace to restore into (default: the backed-up one)."
    ),
    replace: bool = typer.Option(
        False,
        "--replace",
        help="Restore into a namespace holding other documents: it ends holding exactly "
        "the backup's.",
    ),
    as_json: bool = AS_JSON,
) -> None:
    """Bring a backup back on the configured stores: vectors kept when the model is the
    backup's, embedded again when not. Run it again after an interruption to finish it;
    the exit code is 1 if a document failed."""
    from retrieval.domain.models import check_slug

    settings = load_settings()
    with refused_when_invalid():
        if namespace is not None:
            check_slug(namespace, "namespace")

    async def work(app: ApplicationCalls) -> RestoreReport:
        return await app.backups.restore(file, namespace, replace=replace)

    report = run_here_or_served(work, settings)
    show(report, f"restore of {file} into {report.namespace}", as_json)
    for document_id, reason in report.failed.items():
        console.print(f"failed: {document_id}: {reason}")
    if report.failed:
        raise typer.Exit(code=1)


def show(report: BaseModel, title: str, as_json: bool) -> None:
    if as_json:
        print(report.model_dump_json(indent=2))
        return
    table = Table(title=title)
    table.add_column("", justify="left")
    table.add_column("", justify="right")
    for field, value in report.model_dump().items():
        if isinstance(value, str | int):
            table.add_row(field.replace("_", " "), str(value))
    console.print(table)
