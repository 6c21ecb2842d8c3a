"""structlog set-up: JSON lines off a terminal, a console renderer on one.

An application (the command line, the server) calls ``configure_logging``. Until one
configures structlog, the library logs warnings and errors on stderr only: structlog's own
default would print every event, debug included, on stdout.
"""

from __future__ import annotations

import logging
import random
import sys
from collections.abc import AsyncGenerator, Iterator
from contextlib import aclosing, contextmanager
from typing import TypeVar

import structlog
from structlog.typing import EventDict, Processor

from retrieval.settings import LogFormat

T = TypeVar("T")


def configure_logging(level: str = "INFO", log_format: LogFormat = LogFormat.AUTO) -> None:
    structlog.configure(
        processors=processors(log_format),
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=False,
    )


def processors(log_format: LogFormat) -> list[Processor]:
    console = log_format == LogFormat.CONSOLE or (
        log_format == LogFormat.AUTO and sys.stderr.isatty()
    )
    renderer = structlog.dev.ConsoleRenderer() if console else structlog.processors.JSONRenderer()
    return [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.format_exc_info,
        renderer,
    ]


def drop_below_warning(_: object, method_name: str, event_dict: EventDict) -> EventDict:
    if structlog.processors.NAME_TO_LEVEL.get(method_name, logging.WARNING) < logging.WARNING:
        raise structlog.DropEvent
    return event_dict


def quiet_unless_configured() -> None:
    """Warnings and errors on stderr, until the application configures structlog. The level
    is a processor, not the logger class, so that ``capture_logs`` still sees every event."""
    if not structlog.is_configured():
        structlog.configure(
            processors=[drop_below_warning, *processors(LogFormat.AUTO)],
            logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        )


def new_correlation_id() -> str:
    """32 random hexadecimal digits, as ``uuid4().hex`` has, at a fifth of its cost: every
    call gets one. ``random`` is seeded from the system's entropy, again in a forked child."""
    return f"{random.getrandbits(128):032x}"


def current_correlation_id() -> str | None:
    """The correlation id bound to this context, if any."""
    return structlog.contextvars.get_contextvars().get("correlation_id")


@contextmanager
def correlation_scope(correlation_id: str | None = None) -> Iterator[str]:
    """Bind a correlation id to every log line in this context, keeping an outer one."""
    bound = current_correlation_id()
    if bound and correlation_id is None:
        yield bound
        return
    cid = correlation_id or new_correlation_id()
    with structlog.contextvars.bound_contextvars(correlation_id=cid):
        yield cid


async def correlated(steps: AsyncGenerator[T, None]) -> AsyncGenerator[T, None]:
    """``steps`` with one correlation id (this context's, or a new one) bound while each step
    runs, and unbound between steps. A generator that bound it across a ``yield`` would leave
    it bound in its reader's context between steps, and for good when closed from another
    context (collected after its reader broke off)."""
    cid = current_correlation_id() or new_correlation_id()
    async with aclosing(steps):
        while True:
            with correlation_scope(cid):
                try:
                    step = await anext(steps)
                except StopAsyncIteration:
                    return
            yield step


quiet_unless_configured()
