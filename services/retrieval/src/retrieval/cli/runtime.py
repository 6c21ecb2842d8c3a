"""What every command shares: settings, logging, request checks, and a running application.

Little is imported here: settings and logging load when a command starts, the stores and the
model when it runs them, so that help and refused requests answer at once.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from retrieval.cli.environment import REFUSED, from_environment
from retrieval.errors import BackendNotConfiguredError, InvalidRequestError, RetrievalError

if TYPE_CHECKING:
    from retrieval.cli.served import ApplicationCalls
    from retrieval.domain.models import RetrievalQuery
    from retrieval.lifecycle import Application
    from retrieval.settings import Settings

T = TypeVar("T")
console = Console()
errors = Console(stderr=True)
"""Where errors and the reasons of empty outcomes go: stderr, so stdout holds only results."""

VERBOSE: ContextVar[bool] = ContextVar("verbose", default=False)
"""``retrieval -v``: set by the command line's callback, before the command runs."""
QUIET_LEVELS = {"ERROR", "CRITICAL"}
SERVED_CALL_S = 300.0
"""How long a call sent to a running server may take: a batch of documents to embed."""


def load_settings() -> Settings:
    """The settings; logging at WARNING on stderr, at RETRIEVAL_LOG_LEVEL with ``-v``."""
    from retrieval.logging import configure_logging
    from retrieval.settings import Settings

    settings = from_environment(Settings)
    quiet = not VERBOSE.get() and settings.log_level.upper() not in QUIET_LEVELS
    configure_logging("WARNING" if quiet else settings.log_level, settings.log_format)
    return settings


@contextmanager
def refused_when_invalid() -> Iterator[None]:
    """A request the service would refuse ends the command before anything starts:
    ``error: ...`` on stderr, exit code 2."""
    try:
        yield
    except InvalidRequestError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(code=REFUSED) from error


# The flags of a question's scope, shared by the commands that ask one.
DOMAINS = typer.Option([], "--domain", "-d", help="Restrict to a domain (repeat).")
SEARCHED_NAMESPACE = typer.Option(None, "--namespace", "-n", help="Namespace to search.")
SOURCE_PREFIX = typer.Option(
    None, "--source-prefix", help="Only documents from this path or URL, or below it."
)
SECTION = typer.Option(
    None, "--section", help="Only chunks of this section (heading path below the title)."
)


def checked_query(**fields: Any) -> tuple[RetrievalQuery, Settings]:
    """The ``RetrievalQuery`` of ``fields`` and the settings, refused as
    ``refused_when_invalid`` refuses when the request is invalid, its question is blank (the
    service would search nothing) or it names a domain outside ``RETRIEVAL_ALLOWED_DOMAINS``."""
    from retrieval.domain.allowed_domains import check_domains
    from retrieval.domain.models import RetrievalQuery, validated
    from retrieval.domain.query_text import normalise

    with refused_when_invalid():
        request = validated(RetrievalQuery, **fields)
        if not normalise(request.query):
            raise InvalidRequestError("the question is blank: there is nothing to search for")
        settings = load_settings()
        check_domains(request.domains, settings.allowed_domains)
    return request, settings


def run_with_application(
    work: Callable[[Application], Awaitable[T]],
    settings: Settings | None = None,
    *,
    read_only: bool = False,
) -> T:
    """Start the stores, run ``work``, stop them; a service error ends the command with code 1.
    A ``read_only`` command (a read, a dry run) repairs no left write on start: it changes
    nothing. A server the command line started on the data directory is stopped first, so
    that the directory is free."""
    from retrieval.cli.warm import stop_started_server
    from retrieval.lifecycle import running

    settings = settings or load_settings()
    stop_started_server(settings.data_dir)

    async def main() -> T:
        async with running(settings, recover=not read_only) as app:
            return await work(app)

    return run(main())


def run_here_or_served(
    work: Callable[[ApplicationCalls], Awaitable[T]],
    settings: Settings | None = None,
    *,
    read_only: bool = False,
) -> T:
    """``run_with_application``, unless a ``retrieval serve`` holds the data directory, or
    one is started for it (``retrieval.cli.warm``): then ``work`` gets a ``ServedApplication``
    that sends its calls to that server, with the token in ``RETRIEVAL_TOKEN`` (or
    ``RETRIEVAL_GRPC_AUTH_TOKEN``) when it asks for one."""
    from retrieval.cli.warm import served_by

    settings = settings or load_settings()
    record = served_by(settings)
    if record is None or record.tls:
        return run_with_application(work, settings, read_only=read_only)
    from pydantic import SecretStr

    from retrieval.cli.served import ServedApplication, lacking_on_the_server
    from retrieval.grpc.client import RetrievalClient

    token = os.environ.get("RETRIEVAL_TOKEN") or os.environ.get("RETRIEVAL_GRPC_AUTH_TOKEN")

    async def main() -> T:
        secret = SecretStr(token) if token else None
        try:
            async with RetrievalClient.connect(
                record.address, token=secret, timeout=SERVED_CALL_S
            ) as client:
                return await work(ServedApplication(client, settings))
        except BackendNotConfiguredError as error:
            raise lacking_on_the_server(error, record) from error

    return run(main())


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run a command's coroutine; a service error ends the command with its message on
    stderr, code 1."""
    try:
        return asyncio.run(main)
    except RetrievalError as error:
        failed(str(error))


def failed(reason: str) -> NoReturn:
    """End the command: ``error: reason`` on stderr, exit code 1."""
    errors.print(f"[red]error:[/red] {escape(reason)}")
    raise typer.Exit(code=1)
