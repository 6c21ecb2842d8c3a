"""What every command shares: settings, logging, and a running application."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from retrieval.container import Application, running
from retrieval.errors import RetrievalError
from retrieval.logging import configure_logging
from retrieval.settings import Settings

T = TypeVar("T")
console = Console()


def load_settings() -> Settings:
    settings = Settings()
    configure_logging(settings.log_level, settings.log_format)
    return settings


def run_with_application(work: Callable[[Application], Awaitable[T]]) -> T:
    """Start the stores, run ``work``, stop them; a service error ends the command with code 1."""

    async def main() -> T:
        async with running(load_settings()) as app:
            return await work(app)

    return run(main())


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run a command's coroutine; a service error ends the command with its message, code 1."""
    try:
        return asyncio.run(main)
    except RetrievalError as error:
        console.print(f"[red]error:[/red] {escape(str(error))}")
        raise typer.Exit(code=1) from error
