"""The ``retrieval`` command: every command module is light to import, so that help and
refused requests answer at once; the stores and the model load when a command runs them."""

from __future__ import annotations

import typer

from retrieval.cli import (
    ask,
    bench,
    console,
    demo,
    documents,
    library,
    query,
    reconcile,
    stats,
    validate,
)
from retrieval.cli.lazy import lazy_group
from retrieval.cli.runtime import VERBOSE
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
app.add_typer(
    lazy_group(
        "Golden accuracy runs: a seeded suite, graded.", {"run": "retrieval.cli.golden:run"}
    ),
    name="golden",
)
app.command("serve")(serve)
app.command("console")(console.console)


@app.callback()
def options(
    verbose: bool = typer.Option(
        False,
        "--verbose",
        "-v",
        help="Log at RETRIEVAL_LOG_LEVEL (else warnings only) and show every stage's timing.",
    ),
) -> None:
    VERBOSE.set(verbose)


def main() -> None:
    app()
