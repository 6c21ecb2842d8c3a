from __future__ import annotations

import typer

from retrieval.cli.runtime import console, run_with_application
from retrieval.cli.tables import result_table
from retrieval.container import Application
from retrieval.errors import RetrievalError


def query(
    text: str = typer.Argument(..., help="The question."),
    domain: list[str] = typer.Option([], "--domain", "-d", help="Restrict to a domain (repeat)."),
    top_k: int = typer.Option(5, "--top-k", "-k", help="Most matches to return."),
    threshold: float = typer.Option(0.0, "--threshold", "-t", help="Minimum cosine score."),
    namespace: str | None = typer.Option(None, "--namespace", "-n", help="Namespace to search."),
    as_json: bool = typer.Option(
        False, "--json", help="Print the RetrievalResult as JSON, and nothing else, on stdout."
    ),
) -> None:
    """Answer one question from the knowledge base."""

    async def work(app: Application) -> None:
        try:
            result = await app.retrieval.retrieve(text, domain, top_k, threshold, namespace)
        except RetrievalError as error:
            if not as_json:
                raise
            typer.echo(f"error: {error}", err=True)
            raise typer.Exit(code=1) from error
        if as_json:
            typer.echo(result.model_dump_json())
        else:
            console.print(result_table(result, f"“{text}”"))

    run_with_application(work)
