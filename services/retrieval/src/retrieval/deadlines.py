"""Calls bounded in time, and the time a write stopped by its deadline gets to clean up.

``answered_within`` bounds a call in process, failing as a remote call past its deadline
fails (``BackendTimeoutError``).

A call with a deadline is cancelled when its work time ends. A write cancelled so still has to
leave the stores in order: undo what it began before its commit point, release its documents,
retire the namespace's cached results. A store that stalled the write usually stalls these
steps too, so each runs under ``undo_bound()``, which stops it, with ``BackendTimeoutError``,
when the call's undo time ends (``undo_window``, set by the door that bounds the call). The
write's ledger records then hold what the repair needs to finish it (see
``retrieval.service.ingestion.group_write`` and ``docs/reliability.md``). Outside an
``undo_window`` nothing is bounded.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar

from retrieval.errors import BackendTimeoutError

UNDO_SHARE = 0.1
"""The share of an in-process call's time kept for a stopped write to clean up."""
MAX_UNDO_S = 0.125
"""The most kept for it, as a server keeps (``retrieval.grpc.errors.undo_time``)."""


@asynccontextmanager
async def answered_within(seconds: float | None, what: str) -> AsyncIterator[None]:
    """Bounds the block to ``seconds`` (None: no bound): its work is cancelled when all but
    ``undo_s`` of them have passed, a write then has that much to clean up, and past them
    ``BackendTimeoutError`` is raised, as the gRPC client raises it."""
    undo_s = 0.0 if seconds is None else min(MAX_UNDO_S, seconds * UNDO_SHARE)
    work_s = None if seconds is None else seconds - undo_s
    try:
        async with working_for(work_s, undo_s) as scope:
            yield
    except TimeoutError as error:
        if not scope.expired():
            raise
        raise BackendTimeoutError(f"{what}: no answer within {seconds:g} s") from error


@asynccontextmanager
async def working_for(work_s: float | None, undo_s: float) -> AsyncIterator[asyncio.Timeout]:
    """Cancel the block's work after ``work_s`` seconds (None: never), a write stopped so
    having ``undo_s`` more for the steps under ``undo_bound``; yields the scope, whose
    ``expired()`` tells that stop from anything the block raised itself."""
    scope = asyncio.timeout(work_s)
    with undo_window(work_s, undo_s):
        async with scope:
            yield scope


UNDO_STOPPED = "the call's deadline passed before this step could finish"

undo_ends_at: ContextVar[float | None] = ContextVar("undo_ends_at", default=None)
"""When the undo time of the running call ends (the event loop's clock); None: never."""


@contextmanager
def undo_window(work_s: float | None, undo_s: float) -> Iterator[None]:
    """Within the block, a call whose work is cancelled after ``work_s`` seconds (None: a call
    without a deadline) has ``undo_s`` seconds more for the steps under ``undo_bound``."""
    ends_at = None if work_s is None else asyncio.get_running_loop().time() + work_s + undo_s
    token = undo_ends_at.set(ends_at)
    try:
        yield
    finally:
        undo_ends_at.reset(token)


@asynccontextmanager
async def undo_bound() -> AsyncIterator[None]:
    """Stop the body when the call's undo time ends, with ``BackendTimeoutError``."""
    scope = asyncio.timeout_at(undo_ends_at.get())
    try:
        async with scope:
            yield
    except TimeoutError as stopped:
        if scope.expired():
            raise BackendTimeoutError(UNDO_STOPPED) from stopped
        raise
