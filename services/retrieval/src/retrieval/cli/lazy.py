"""Command groups whose commands are imported when one is listed or run, not at start-up: a
benchmark's module imports the whole stack, which ``retrieval --help`` has no use for."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from typing import ClassVar

import typer
from typer.core import TyperCommand, TyperGroup


class LazyCommands(TyperGroup):
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
