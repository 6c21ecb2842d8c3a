"""``retrieval sync``, ``retrieval delete`` and ``retrieval documents``: a namespace kept in
step with the files it was ingested from."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from retrieval.adapters.files.local_sources import source_or_none
from retrieval.cli.documents import (
    Ingested,
    count,
    failed_outcomes,
    ingest_progress,
    read_with_progress,
    told_when_interrupted,
)
from retrieval.cli.runtime import (
    console,
    failed,
    load_settings,
    refused_when_invalid,
    run_here_or_served,
)
from retrieval.domain.allowed_domains import check_domains
from retrieval.errors import MassDeleteError

if TYPE_CHECKING:
    from retrieval.cli.served import ApplicationCalls
    from retrieval.service.ingestion.library import DocumentSummary
    from retrieval.service.ingestion.local_files import PathSync
    from retrieval.service.ingestion.outcomes import DeleteReport, DocumentOutcome

NAMESPACE = typer.Option(..., "--namespace", "-n", help="The namespace.")
JSON = typer.Option(False, "--json", help="Print the report as JSON, and nothing else.")


def outcome_lines(outcomes: Iterable[DocumentOutcome]) -> None:
    from retrieval.service.ingestion.outcomes import Outcome
    from retrieval.source_display import readable_source

    for outcome in outcomes:
        if outcome.outcome is Outcome.UNCHANGED:
            continue
        colour = {Outcome.FAILED: "red", Outcome.DELETED: "yellow"}.get(outcome.outcome, "green")
        line = f"[{colour}]{outcome.outcome.value:>9}[/{colour}] {escape(outcome.document_id)}"
        if outcome.source is not None:
            line += f" [dim]{escape(readable_source(outcome.source))}[/dim]"
        console.print(line)
        if outcome.error is not None:
            console.print(f"          {escape(outcome.error)}")


def summary(outcomes: Iterable[DocumentOutcome], failures: int) -> str:
    """How many documents had each outcome, ``failures`` (files and documents refused before
    they were written) counted as failed."""
    from retrieval.service.ingestion.outcomes import Outcome

    counts = Counter(outcome.outcome for outcome in outcomes)
    counts[Outcome.FAILED] += failures
    return ", ".join(f"{counts[kind]} {kind.value}" for kind in Outcome)


def sync(
    paths: list[Path] = typer.Argument(..., help="Folders or files the namespace mirrors."),
    namespace: str = NAMESPACE,
    domain: str | None = typer.Option(
        None, "--domain", "-d", help="Domain of every document that does not set its own."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Report only; change nothing."),
    replace: bool = typer.Option(
        False, "--replace", help="Let a file take a document id another source holds."
    ),
    allow_mass_delete: bool = typer.Option(
        False,
        "--allow-mass-delete",
        help="Delete even when more than RETRIEVAL_SYNC_MAX_DELETE_SHARE of the namespace goes.",
    ),
    as_json: bool = JSON,
) -> None:
    """Ingest what is new or changed under PATHS and delete the documents ingested from under
    them whose files are gone. A file that cannot be read keeps its documents; the exit code
    is 1 if any file or document failed or the sync (or, with --dry-run, the sync it plans)
    would delete too much, 130 if interrupted (Ctrl-C)."""
    from retrieval.domain.models import check_slug

    settings = load_settings()
    with refused_when_invalid():
        check_slug(namespace, "namespace")
        check_domains([domain] if domain is not None else [], settings.allowed_domains)
    loaded = read_with_progress(paths, domain, None, settings.ingest_max_file_bytes)
    refused: list[MassDeleteError] = []

    async def work(app: ApplicationCalls) -> PathSync:
        with ingest_progress(len(loaded.documents), ingested.outcomes) as on_group:

            async def synced(allowed: bool) -> PathSync:
                return await app.local_files.sync(
                    paths,
                    loaded,
                    namespace,
                    dry_run=dry_run,
                    replace=replace,
                    allow_mass_delete=allowed,
                    on_progress=on_group,
                )

            try:
                return await synced(allow_mass_delete)
            except MassDeleteError as error:
                if not dry_run:
                    raise
                refused.append(error)
                return await synced(True)

    ingested = Ingested(namespace=namespace)
    with told_when_interrupted(ingested):
        synced = (
            run_here_or_served(work, settings, read_only=dry_run)
            if any(p.exists() for p in paths)
            else None
        )
    failures = [
        str(failure) for failure in (loaded.failures if synced is None else synced.failures)
    ]
    for failure in failures:
        if as_json:
            typer.echo(f"failed: {failure}", err=True)
        else:
            console.print(f"[red]   failed[/red] {escape(failure)}")
    if synced is None:
        raise typer.Exit(code=1)
    report = synced.report
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
    else:
        outcome_lines(report.outcomes)
        for document_id in report.busy:
            console.print(f"[red]     busy[/red] {escape(document_id)}: being written; run again")
        heading = f"{count(loaded.files, 'file')}: {summary(report.outcomes, len(failures))}"
        console.print(heading + (" (dry run: nothing changed)" if dry_run else ""))
    for error in refused:
        failed(f"without --dry-run, {error}")
    if failures or report.busy or failed_outcomes(report.outcomes):
        raise typer.Exit(code=1)


def delete(
    document_ids: list[str] = typer.Argument(None, help="Documents to delete."),
    namespace: str = NAMESPACE,
    source_prefix: str | None = typer.Option(
        None,
        "--source-prefix",
        help="Also delete every document whose source is this path or URL or lies below it.",
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Report only; change nothing."),
    as_json: bool = JSON,
) -> None:
    """Delete documents (their chunks, vectors and keyword entries) by id or by source. The
    exit code is 1 if an id is missing or nothing lies under --source-prefix."""
    from retrieval.domain.models import check_slug
    from retrieval.service.ingestion.requests import DeleteRequest
    from retrieval.source_display import readable_source

    settings = load_settings()
    with refused_when_invalid():
        check_slug(namespace, "namespace")
        for document_id in document_ids or []:
            check_slug(document_id, "document_ids")
    prefix = source_or_none(source_prefix)

    request = DeleteRequest(namespace, document_ids or [], prefix, dry_run)

    async def work(app: ApplicationCalls) -> DeleteReport:
        return await app.library.apply(request)

    report = run_here_or_served(work, settings, read_only=dry_run)
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
    else:
        for document in report.deleted:
            console.print(
                f"[yellow]  deleted[/yellow] {escape(document.document_id)} "
                f"[dim]{escape(readable_source(document.source))}[/dim]"
            )
        for document_id in report.missing:
            console.print(f"[red]  missing[/red] {escape(document_id)}: no such document")
        for document_id in report.busy:
            console.print(f"[red]     busy[/red] {escape(document_id)}: being written; run again")
        verb = "would be deleted (dry run)" if dry_run else "deleted"
        console.print(f"{count(len(report.deleted), 'document')} {verb}")
    if report.missing or report.busy:
        raise typer.Exit(code=1)
    if not report.deleted and source_prefix is not None:
        failed(f"nothing under {source_prefix} in namespace {namespace!r}")


def documents(
    namespace: str = NAMESPACE,
    source_prefix: str | None = typer.Option(
        None, "--source-prefix", help="Only documents whose source is or lies below this."
    ),
    as_json: bool = JSON,
) -> None:
    """List a namespace's documents: id, title, source, chunks, when last written. The exit
    code is 1 if there are none: no such namespace, or nothing under --source-prefix."""
    from retrieval.domain.models import check_slug

    settings = load_settings()
    with refused_when_invalid():
        check_slug(namespace, "namespace")
    prefix = source_or_none(source_prefix)

    async def work(app: ApplicationCalls) -> list[DocumentSummary]:
        return await app.library.documents(namespace, source_prefix=prefix)

    listed = run_here_or_served(work, settings, read_only=True)
    if as_json:
        typer.echo("[" + ",".join(d.model_dump_json() for d in listed) + "]")
    elif listed:
        console.print(documents_table(namespace, listed))
    if listed:
        return
    if source_prefix is not None:
        failed(f"nothing under {source_prefix} in namespace {namespace!r}")
    failed(f"namespace {namespace!r} does not exist or holds no documents")


def documents_table(namespace: str, listed: list[DocumentSummary]) -> Table:
    """One row per document, its id whole on one line, to be copied into ``delete``."""
    from retrieval.source_display import readable_source

    table = Table(title=f"namespace {namespace}: {count(len(listed), 'document')}")
    ids = [
        Text(d.document_id).append(" (pending)" if d.pending else "", style="yellow")
        for d in listed
    ]
    table.add_column("document", no_wrap=True, min_width=max(len(cell) for cell in ids))
    table.add_column("title", overflow="fold")
    table.add_column("source", overflow="fold")
    table.add_column("chunks", justify="right")
    table.add_column("updated", no_wrap=True)
    for document, document_id in zip(listed, ids, strict=True):
        updated = document.updated_at
        table.add_row(
            document_id,
            escape(document.title or ""),
            escape(readable_source(document.source)),
            str(document.chunks),
            updated.strftime("%Y-%m-%d %H:%M") if updated is not None else "",
        )
    return table
