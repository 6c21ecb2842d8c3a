from __future__ import annotations

import typer

from retrieval.cli import (
    ask,
    bench,
    demo,
    documents,
    golden,
    library,
    query,
    reconcile,
    stats,
    validate,
)
from retrieval.cli.serve import serve

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Retrieval service for agents.")
app.command("ingest")(documents.ingest)
app.command("sync")(library.sync)
app.command("delete")(library.delete)
app.command("documents")(library.documents)
app.command("query")(query.query)
app.command("ask")(ask.ask)
app.command("stats")(stats.stats)
app.command("reconcile")(reconcile.reconcile)
app.command("validate")(validate.validate)
app.command("demo")(demo.demo)
app.add_typer(bench.app, name="bench")
app.add_typer(golden.app, name="golden")
app.command("serve")(serve)


def main() -> None:
    app()
