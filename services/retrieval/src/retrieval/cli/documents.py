"""``retrieval ingest``: files and folders in, one line per file or document that failed."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape
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

from retrieval.cli.runtime import (
    console,
    failed,
    load_settings,
    refused_when_invalid,
    run_here_or_served,
)
from retrieval.domain.allowed_domains import check_domains
from retrieval.errors import RetrievalError

if TYPE_CHECKING:
    from retrieval.adapters.files.document_files import LoadedDocuments
    from retrieval.cli.served import ApplicationCalls
    from retrieval.service.ingestion.local_files import SourceFailure
    from retrieval.service.ingestion.outcomes import DocumentOutcome
    from retrieval.service.ingestion.progress import IngestProgress


def count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def chunks_per_second(task: Task) -> float:
    elapsed = task.finished_time if task.finished else task.elapsed
    return task.completed / elapsed if elapsed else 0.0


class DocumentsColumn(ProgressColumn):
    """Documents settled of those to write."""

    def render(self, task: Task) -> Text:
        settled, documents = task.fields["settled"], task.fields["documents"]
        return Text(f"{settled}/{documents} documents", style="progress.download")


class ChunksColumn(ProgressColumn):
    """Chunks embedded of those to embed (unknown until every document is chunked), and how
    many a second."""

    def render(self, task: Task) -> Text:
        to_embed = "?" if task.total is None else f"{task.total:.0f}"
        return Text(
            f"{task.completed:.0f}/{to_embed} chunks · {chunks_per_second(task):.1f} chunks/s",
            style="progress.data.speed",
        )


class EtaColumn(ProgressColumn):
    """Time left at the rate so far; unknown before the first chunk is embedded."""

    def render(self, task: Task) -> Text:
        rate = chunks_per_second(task)
        if task.total is None or not rate:
            return Text("eta -:--:--", style="progress.remaining")
        left = (task.total - task.completed) / rate
        return Text(f"eta {timedelta(seconds=round(left))}", style="progress.remaining")


def bar(*columns: ProgressColumn) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        *columns,
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    )


def read_with_progress(
    paths: list[Path], domain: str | None, title: str | None, max_file_bytes: int
) -> LoadedDocuments:
    """The files' documents; a file over ``max_file_bytes`` fails unread."""
    from retrieval.adapters.files.document_files import read_documents

    with bar(MofNCompleteColumn(), TextColumn("files")) as progress:
        task = progress.add_task("reading", total=None)
        return read_documents(
            paths,
            domain=domain,
            title=title,
            on_file=lambda done, total: progress.update(task, completed=done, total=total),
            max_file_bytes=max_file_bytes,
        )


@contextmanager
def ingest_progress(
    documents: int, settled: list[DocumentOutcome] | None = None
) -> Iterator[IngestProgress]:
    """Yields the ``on_progress`` of an ingestion: a bar of the documents
    settled and the chunks embedded. ``settled`` collects the outcomes as groups settle.
    Each report stops the run if its task was cancelled (``stop_if_cancelled``)."""
    from retrieval.service.ingestion.progress import IngestProgress

    with bar(DocumentsColumn(), ChunksColumn(), EtaColumn()) as progress:
        task = progress.add_task("ingesting", total=None, documents=documents, settled=0)
        done = 0

        def on_to_embed(chunks: int) -> None:
            progress.update(task, total=chunks)
            stop_if_cancelled()

        def on_embedded(chunks: int) -> None:
            progress.update(task, advance=chunks)
            stop_if_cancelled()

        def on_settled(outcomes: Sequence[DocumentOutcome]) -> None:
            nonlocal done
            done += len(outcomes)
            progress.update(task, settled=done)
            if settled is not None:
                settled.extend(outcomes)
            stop_if_cancelled()

        yield IngestProgress(to_embed=on_to_embed, embedded=on_embedded, settled=on_settled)


def stop_if_cancelled() -> None:
    """Ctrl-C cancels the command's task, but a library can swallow a cancellation that lands
    as its call completes (``asyncio.wait_for`` before Python 3.12): a cancellation still
    pending is raised here."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


@dataclass
class Ingested:
    """What a run wrote, filled in group by group, so that an interrupted run can tell."""

    outcomes: list[DocumentOutcome] = field(default_factory=list)
    rejected: list[SourceFailure] = field(default_factory=list)
    namespace: str | None = None


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
    be read is reported and the rest go on; the exit code is 1 if any file or document failed,
    130 if interrupted (Ctrl-C)."""
    from retrieval.domain.models import namespace_or_default

    settings = load_settings()
    with refused_when_invalid():
        target = namespace_or_default(namespace, settings.default_namespace)
        check_domains([domain] if domain is not None else [], settings.allowed_domains)
    ingested = Ingested()
    with told_when_interrupted(ingested):
        loaded = read_reporting_failures(paths, domain, title, settings.ingest_max_file_bytes)

        async def work(app: ApplicationCalls) -> None:
            ingested.namespace = target
            with ingest_progress(len(loaded.documents), ingested.outcomes) as progress:
                report = await app.local_files.ingest(
                    loaded, target, replace=replace, on_progress=progress
                )
            ingested.rejected = list(report.failures[len(loaded.failures) :])

        if loaded.documents:
            run_here_or_served(work, settings)
    refused = len(loaded.failures) + len(ingested.rejected)
    console.print(f"{count(loaded.files, 'file')}, {written(ingested.outcomes, refused)}")
    report_failed(ingested)
    if loaded.failures or ingested.rejected or failed_outcomes(ingested.outcomes):
        raise typer.Exit(code=1)


def read_reporting_failures(
    paths: list[Path], domain: str | None, title: str | None, max_file_bytes: int
) -> LoadedDocuments:
    try:
        loaded = read_with_progress(paths, domain, title, max_file_bytes)
    except RetrievalError as error:
        failed(str(error))
    for skipped in loaded.skipped:
        console.print(f"[dim]skipped {skipped}: unsupported file type[/dim]")
    for failure in loaded.failures:
        console.print(f"[red]failed[/red] {failure}")
    return loaded


@contextmanager
def told_when_interrupted(ingested: Ingested) -> Iterator[None]:
    """On Ctrl-C: what was written, how the write under way gets finished; exit code 130."""
    try:
        yield
    except KeyboardInterrupt:
        console.print(f"[yellow]interrupted[/yellow] after {written(ingested.outcomes)}")
        report_failed(ingested)
        if ingested.namespace is not None:
            console.print(
                "The documents being written when it stopped are completed or rolled back by "
                "the next run of the same command, or by "
                f"`retrieval reconcile --namespace {escape(ingested.namespace)}`."
            )
        raise typer.Exit(code=130) from None


def written(outcomes: Sequence[DocumentOutcome], refused: int = 0) -> str:
    """Documents and chunks, and how many documents had each outcome, ``refused`` (files and
    documents that failed before they were written) counted as failed."""
    from retrieval.service.ingestion.outcomes import Outcome

    counts = Counter(outcome.outcome for outcome in outcomes)
    counts[Outcome.FAILED] += refused
    summary = ", ".join(f"{counts[kind]} {kind.value}" for kind in Outcome if counts[kind])
    chunks = sum(outcome.chunks for outcome in outcomes)
    return f"{count(len(outcomes), 'document')}, {count(chunks, 'chunk')}" + (
        f": {summary}" if summary else ""
    )


def failed_outcomes(outcomes: Iterable[DocumentOutcome]) -> list[DocumentOutcome]:
    from retrieval.service.ingestion.outcomes import Outcome

    return [outcome for outcome in outcomes if outcome.outcome is Outcome.FAILED]


def report_failed(ingested: Ingested) -> None:
    for problem in ingested.rejected:
        console.print(f"[red]failed[/red] {problem.reason}")
    for outcome in failed_outcomes(ingested.outcomes):
        console.print(f"[red]failed[/red] {outcome.document_id}: {outcome.error}")
