from __future__ import annotations

from collections import Counter
from pathlib import Path

import typer
from rich.progress import Progress

from retrieval.adapters.document_files import load_documents
from retrieval.cli.runtime import console, run_with_application
from retrieval.container import Application
from retrieval.service.ingestion_service import Outcome


def ingest(
    paths: list[Path] = typer.Argument(..., help="Markdown or JSON files, or folders of them."),
    namespace: str | None = typer.Option(None, "--namespace", "-n", help="Target namespace."),
) -> None:
    """Chunk, embed and store documents; unchanged documents are skipped."""

    async def work(app: Application) -> None:
        documents = load_documents(paths)
        with Progress(console=console, transient=True) as progress:
            task = progress.add_task("ingesting", total=len(documents))
            outcomes = await app.ingestion.ingest(
                documents, namespace, on_progress=lambda n: progress.advance(task, n)
            )
        counts = Counter(outcome.outcome for outcome in outcomes)
        summary = ", ".join(f"{counts[kind]} {kind.value}" for kind in Outcome if counts[kind])
        console.print(
            f"{len(documents)} documents, {sum(o.chunks for o in outcomes)} chunks: {summary}"
        )
        for failed in (o for o in outcomes if o.outcome is Outcome.FAILED):
            console.print(f"[red]failed[/red] {failed.document_id}: {failed.error}")
        if counts[Outcome.FAILED]:
            raise typer.Exit(code=1)

    run_with_application(work)
