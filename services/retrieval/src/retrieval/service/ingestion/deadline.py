"""A call's deadline, and the bound it sets on what a write does once stopped by it.

``deadline(work_s, undo_s)`` gives a call ``work_s`` seconds, then cancels it and raises
``BackendTimeoutError``. A write cancelled so still has to leave the stores in order: undo
what it began before its commit point, release its documents, retire the namespace's cached
results. Each such step runs under ``undo_bound()``, which stops it ``undo_s`` after the
work's end with ``BackendTimeoutError`` (a store that stalled the write usually stalls its
undo too); the write's ledger records then hold what the repair needs to finish it (see
``retrieval.service.ingestion.group_write`` and ``docs/reliability.md``). So a caller hears
by ``work_s + undo_s``, whichever of the embedder, the index or the chunk store stalls.
Without a deadline, nothing is bounded.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar

from retrieval.errors import BackendTimeoutError

DEADLINE_PASSED = "the stores gave no answer before the call's deadline"
UNDO_STOPPED = "the call's deadline passed before this step could finish"

undo_ends_at: ContextVar[float | None] = ContextVar("undo_ends_at", default=None)
"""When what a stopped write does to leave the stores in order must end (the event loop's
clock), or None when its call has no deadline."""


@asynccontextmanager
async def deadline(work_s: float | None, undo_s: float) -> AsyncIterator[None]:
    """Cancel the body after ``work_s`` seconds (None: never) and raise ``BackendTimeoutError``
    in place of whatever it raised as it stopped; the steps under ``undo_bound`` get
    ``undo_s`` seconds more."""
    if work_s is None:
        yield
        return
    scope = asyncio.timeout(work_s)
    ends = undo_ends_at.set(asyncio.get_running_loop().time() + work_s + undo_s)
    try:
        async with scope:
            yield
    except Exception as stopped:
        if scope.expired():
            raise BackendTimeoutError(DEADLINE_PASSED) from stopped
        raise
    finally:
        undo_ends_at.reset(ends)


@asynccontextmanager
async def undo_bound() -> AsyncIterator[None]:
    """Stop the body when the call's undo time ends, with ``BackendTimeoutError``."""
    ends = undo_ends_at.get()
    if ends is None:
        yield
        return
    scope = asyncio.timeout_at(ends)
    try:
        async with scope:
            yield
    except TimeoutError as stopped:
        if scope.expired():
            raise BackendTimeoutError(UNDO_STOPPED) from stopped
        raise
