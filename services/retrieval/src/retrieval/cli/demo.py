from __future__ import annotations

import typer

from retrieval.adapters.document_files import load_documents
from retrieval.cli.runtime import console, run_with_application
from retrieval.cli.tables import result_table
from retrieval.container import Application
from retrieval.demo import EXAMPLE_QUERIES, KNOWLEDGE_DIR, NAMESPACE


def demo(
    namespace: str = typer.Option(NAMESPACE, "--namespace", "-n", help="Namespace to fill."),
    top_k: int = typer.Option(3, "--top-k", "-k", help="Matches per query."),
) -> None:
    """Ingest the bundled tea knowledge base and answer example questions."""

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
            console.print(result_table(result, f"“{question}” ({'; '.join(scope)})"))

    run_with_application(work)
