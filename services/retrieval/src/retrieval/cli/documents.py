"""``retrieval ingest``: files and folders in, one line per file or document that failed."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from retrieval.adapters.document_files import LoadedDocuments, read_documents
from retrieval.cli.runtime import console, run_with_application
from retrieval.container import Application
from retrieval.domain.models import RagDocument, check_slug
from retrieval.errors import InvalidRequestError, RetrievalError
from retrieval.service.ingestion_service import DocumentOutcome, Outcome
from retrieval.service.ingestion_service import Progress as OnGroup
from retrieval.service.retrieval_service import check_domains


def count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


class ChunkRateColumn(ProgressColumn):
    """Chunks done so far and chunks per second."""

    def render(self, task: Task) -> Text:
        chunks = task.fields.get("chunks", 0)
        elapsed = task.finished_time if task.finished else task.elapsed
        rate = chunks / elapsed if elapsed else 0.0
        return Text(f"{chunks} chunks · {rate:.1f} chunks/s", style="progress.data.speed")


def bar(*columns: ProgressColumn) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        *columns,
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    )


def read_with_progress(paths: list[Path], domain: str | None, title: str | None) -> LoadedDocuments:
    with bar(TextColumn("files")) as progress:
        task = progress.add_task("reading", total=None)
        return read_documents(
            paths,
            domain=domain,
            title=title,
            on_file=lambda done, total: progress.update(task, completed=done, total=total),
        )


@contextmanager
def ingest_progress(documents: int) -> Iterator[OnGroup]:
    """Yields the ``on_progress`` callback of ``IngestionService.ingest``."""
    with bar(TextColumn("documents"), ChunkRateColumn()) as progress:
        task = progress.add_task("ingesting", total=documents, chunks=0)

        def on_group(outcomes: Sequence[DocumentOutcome]) -> None:
            chunks = progress.tasks[task].fields["chunks"] + sum(o.chunks for o in outcomes)
            progress.update(task, advance=len(outcomes), chunks=chunks)

        yield on_group


@dataclass
class Ingested:
    outcomes: list[DocumentOutcome] = field(default_factory=list)
    rejected: list[InvalidRequestError] = field(default_factory=list)


def check_each(
    app: Application, documents: Sequence[RagDocument], namespace: str
) -> tuple[list[RagDocument], list[InvalidRequestError]]:
    """The documents the service accepts, and the problem of each other one, so that one bad
    document fails alone rather than the whole request."""
    accepted: list[RagDocument] = []
    rejected: list[InvalidRequestError] = []
    for document in documents:
        try:
            app.ingestion.check(document, namespace)
        except InvalidRequestError as error:
            rejected.append(error)
        else:
            accepted.append(document)
    return accepted, rejected


def ingest(
    paths: list[Path] = typer.Argument(
        ...,
        help="Files or folders: .md .markdown .txt (front matter optional), .html .htm, .pdf, "
        ".docx, and {'documents': [...]} .json collections.",
    ),
    namespace: str | None = typer.Option(None, "--namespace", "-n", help="Target namespace."),
    domain: str | None = typer.Option(
        None, "--domain", "-d", help="Domain of every document that does not set its own."
    ),
    title: str | None = typer.Option(
        None, "--title", help="Title of the document, when it sets none (one file only)."
    ),
    replace: bool = typer.Option(
        False, "--replace", help="Let a file take a document id another source holds."
    ),
) -> None:
    """Chunk, embed and store documents; unchanged documents are skipped. A file that cannot
    be read is reported and the rest go on; the exit code is 1 if any file or document failed."""
    try:
        loaded = read_with_progress(paths, domain, title)
    except RetrievalError as error:
        console.print(f"[red]error:[/red] {error}")
        raise typer.Exit(code=1) from error
    for skipped in loaded.skipped:
        console.print(f"[dim]skipped {skipped}: unsupported file type[/dim]")
    for failure in loaded.failures:
        console.print(f"[red]failed[/red] {failure}")

    async def work(app: Application) -> Ingested:
        if domain is not None:
            check_domains([domain], app.settings.allowed_domains)
        target = check_slug(namespace or app.settings.default_namespace, "namespace")
        accepted, rejected = check_each(app, loaded.documents, target)
        with ingest_progress(len(accepted)) as on_group:
            outcomes = await app.ingestion.ingest(
                accepted, target, on_progress=on_group, replace=replace
            )
        return Ingested(outcomes, rejected)

    result = run_with_application(work) if loaded.documents else Ingested()
    counts = Counter(outcome.outcome for outcome in result.outcomes)
    summary = ", ".join(f"{counts[kind]} {kind.value}" for kind in Outcome if counts[kind])
    chunks = sum(o.chunks for o in result.outcomes)
    console.print(
        f"{count(loaded.files, 'file')}, {count(len(result.outcomes), 'document')}, "
        f"{count(chunks, 'chunk')}" + (f": {summary}" if summary else "")
    )
    for problem in result.rejected:
        console.print(f"[red]failed[/red] {problem.reason}")
    for failed in (o for o in result.outcomes if o.outcome is Outcome.FAILED):
        console.print(f"[red]failed[/red] {failed.document_id}: {failed.error}")
    if loaded.failures or result.rejected or counts[Outcome.FAILED]:
        raise typer.Exit(code=1)
