"""``retrieval demo``: the bundled tea knowledge base ingested and asked."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from retrieval.cli.help_values import DEMO_NAMESPACE
from retrieval.cli.runtime import VERBOSE, console, load_settings, run_with_application

if TYPE_CHECKING:
    from retrieval.lifecycle import Application


def demo(
    namespace: str = typer.Option(DEMO_NAMESPACE, "--namespace", "-n", help="Namespace to fill."),
    top_k: int = typer.Option(3, "--top-k", "-k", help="Matches per query."),
) -> None:
    """Ingest the bundled tea knowledge base and answer example questions."""
    from retrieval.adapters.files.document_files import load_documents
    from retrieval.cli.tables import result_table
    from retrieval.demo import EXAMPLE_QUERIES, KNOWLEDGE_DIR, demo_settings

    async def work(app: Application) -> None:
        documents = load_documents([KNOWLEDGE_DIR])
        with console.status(f"ingesting {len(documents)} documents into {namespace!r}"):
            outcomes = await app.ingestion.ingest(documents, namespace)
        chunks = sum(outcome.chunks for outcome in outcomes)
        console.print(f"[bold]{len(documents)} documents, {chunks} chunks in {namespace!r}[/bold]")
        for question, domains, options in EXAMPLE_QUERIES:
            result = await app.retrieval.retrieve(question, domains, top_k, 0.0, namespace, options)
            scope = [", ".join(domains) if domains else "all domains"]
            scope += [
                f"{name} {value}" for name, value in options.model_dump(exclude_none=True).items()
            ]
            title = f"“{question}” ({'; '.join(scope)})"
            console.print(result_table(result, title, every_stage=VERBOSE.get()))

    run_with_application(work, demo_settings(load_settings()))
