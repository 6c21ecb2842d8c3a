from __future__ import annotations

import typer

from retrieval.cli import bench, demo, documents, query, stats

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Retrieval service for agents.")
app.command("ingest")(documents.ingest)
app.command("query")(query.query)
app.command("stats")(stats.stats)
app.command("demo")(demo.demo)
app.add_typer(bench.app, name="bench")


def main() -> None:
    app()
