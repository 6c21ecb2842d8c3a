"""The ``retrieval`` command: every command module is light to import, so that help and
refused requests answer at once; the stores and the model load when a command runs them.

Installed packages add command groups under the ``retrieval.cli`` entry points (the
benchmarks' ``retrieval-bench`` adds ``bench``); one is loaded only when it is run or the
commands are listed."""

from __future__ import annotations

from functools import cache
from importlib.metadata import EntryPoint, entry_points

import typer
from typer.core import TyperCommand, TyperGroup

from retrieval.cli import (
    ask,
    backup,
    console,
    demo,
    documents,
    library,
    mcp,
    query,
    reconcile,
    stats,
    validate,
)
from retrieval.cli.lazy import SentenceListing, lazy_group
from retrieval.cli.runtime import VERBOSE
from retrieval.cli.serve import serve, stop

COMMAND_GROUPS = "retrieval.cli"


@cache
def installed_groups() -> dict[str, EntryPoint]:
    """The command groups installed packages register, by command name."""
    return {entry.name: entry for entry in entry_points(group=COMMAND_GROUPS)}


@cache
def command_group(entry: EntryPoint) -> TyperGroup:
    """The group an entry point names (a ``typer.Typer``), under the entry point's name."""
    group = typer.main.get_group(entry.load())
    group.name = entry.name
    plain_help(group)
    return group


def plain_help(command: TyperCommand | TyperGroup) -> None:
    """Help laid out as click lays it out, for ``command`` and every command under it."""
    command.rich_markup_mode = None
    for sub in getattr(command, "commands", {}).values():
        plain_help(sub)


class WithInstalledGroups(SentenceListing):
    """The commands declared here, then the installed groups."""

    def list_commands(self, ctx: typer.Context) -> list[str]:
        declared = super().list_commands(ctx)
        return [*declared, *sorted(installed_groups().keys() - set(declared))]

    def get_command(self, ctx: typer.Context, cmd_name: str) -> TyperCommand | TyperGroup | None:
        declared = super().get_command(ctx, cmd_name)
        if declared is not None:
            return declared
        entry = installed_groups().get(cmd_name)
        return None if entry is None else command_group(entry)


app = typer.Typer(
    cls=WithInstalledGroups,
    no_args_is_help=True,
    add_completion=False,
    help="Retrieval service for agents.",
    rich_markup_mode=None,
)
app.command("ingest")(documents.ingest)
app.command("sync")(library.sync)
app.command("delete")(library.delete)
app.command("documents")(library.documents)
app.command("query")(query.query)
app.command("ask")(ask.ask)
app.command("stats")(stats.stats)
app.command("reconcile")(reconcile.reconcile)
app.command("backup")(backup.backup)
app.command("restore")(backup.restore)
app.command("validate")(validate.validate)
app.command("demo")(demo.demo)
app.add_typer(
    lazy_group(
        "Golden accuracy runs: a seeded suite, graded.", {"run": "retrieval.cli.golden:run"}
    ),
    name="golden",
)
app.command("serve")(serve)
app.command("stop")(stop)
app.command("console")(console.console)
app.command("mcp")(mcp.mcp)


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
