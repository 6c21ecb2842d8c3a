from __future__ import annotations

import typer

from retrieval.cli.runtime import console, run_with_application
from retrieval.cli.tables import result_table
from retrieval.container import Application


def query(
    text: str = typer.Argument(..., help="The question."),
    domain: list[str] = typer.Option([], "--domain", "-d", help="Restrict to a domain (repeat)."),
    top_k: int = typer.Option(5, "--top-k", "-k", help="Most matches to return."),
    threshold: float = typer.Option(0.0, "--threshold", "-t", help="Minimum cosine score."),
    namespace: str | None = typer.Option(None, "--namespace", "-n", help="Namespace to search."),
) -> None:
    """Answer one question from the knowledge base."""

    async def work(app: Application) -> None:
        result = await app.retrieval.retrieve(text, domain, top_k, threshold, namespace)
        console.print(result_table(result, f"“{text}”"))

    run_with_application(work)
