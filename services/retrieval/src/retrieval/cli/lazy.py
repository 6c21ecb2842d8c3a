"""Command groups whose commands are imported when one is listed or run, not at start-up: a
benchmark's module imports the whole stack, which ``retrieval --help`` has no use for. Every
group lists its commands with their first sentence whole (``SentenceListing``)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from importlib import import_module
from typing import TYPE_CHECKING, ClassVar

import typer
from typer.core import TyperCommand, TyperGroup, TyperOption

if TYPE_CHECKING:
    from typer._click import HelpFormatter


class SentenceListing(TyperGroup):
    """A group listing each command with the first sentence of its help, whole, wrapped to the
    terminal (click cuts it at 45 characters)."""

    def get_help_option(self, ctx: typer.Context) -> TyperOption | None:
        """The ``--help`` flag, False unless given: Typer validates a flag left None with
        Pydantic, which ``retrieval COMMAND --help`` would load for the group's own flag."""
        option = super().get_help_option(ctx)
        if option is not None:
            option.default = False
        return option

    def format_commands(self, ctx: typer.Context, formatter: HelpFormatter) -> None:
        listed = [(name, self.get_command(ctx, name)) for name in self.list_commands(ctx)]
        rows = [
            (name, command.get_short_help_str(limit=sys.maxsize))
            for name, command in listed
            if command is not None and not command.hidden
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


class LazyCommands(SentenceListing):
    """Commands located as ``module:function``, made into click commands on demand."""

    located: ClassVar[Mapping[str, str]] = {}

    def list_commands(self, ctx: typer.Context) -> list[str]:
        return [*super().list_commands(ctx), *self.located]

    def get_command(self, ctx: typer.Context, cmd_name: str) -> TyperCommand | None:
        if cmd_name not in self.located:
            return super().get_command(ctx, cmd_name)
        module, function = self.located[cmd_name].split(":")
        single = typer.Typer(add_completion=False, rich_markup_mode=None)
        single.command(cmd_name)(getattr(import_module(module), function))
        return typer.main.get_command(single)


def lazy_group(description: str, located: Mapping[str, str]) -> typer.Typer:
    """A group of the commands ``located`` names, each as ``module:function``."""
    commands = type("LazyCommands", (LazyCommands,), {"located": dict(located)})
    return typer.Typer(cls=commands, no_args_is_help=True, help=description, rich_markup_mode=None)
