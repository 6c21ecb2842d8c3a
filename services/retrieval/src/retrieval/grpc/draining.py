"""The calls a server is answering, so that shutdown waits for the ones it cancelled.

``grpc.aio.Server.stop`` returns as soon as it has cancelled the calls still running at the
end of the grace period, before their tasks have run what cancellation runs: an ingestion
undoing a write it had begun. Closing the stores then would make that undo fail and leave the
documents pending until the next write or ``reconcile``; ``CallsInFlight.ended`` waits for it.
The same record tells how long the server has gone without a call (``stopped_when_idle``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

import grpc
import structlog

from retrieval.grpc.interceptors import Behaviour, CallInterceptor

log = structlog.get_logger("grpc")


class CallsInFlight(CallInterceptor):
    """Keeps the task of every call (but bidirectional streams) until the call ends."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self._last_ended = time.monotonic()

    def wrap(self, behaviour: Behaviour, details: grpc.HandlerCallDetails) -> Behaviour:
        async def tracked(request: Any, context: grpc.aio.ServicerContext) -> Any:
            task = asyncio.current_task()
            assert task is not None
            self._tasks.add(task)
            try:
                return await behaviour(request, context)
            finally:
                self._tasks.discard(task)
                self._last_ended = time.monotonic()

        return tracked

    async def ended(self, timeout_s: float) -> int:
        """Wait up to ``timeout_s`` for every call in flight to end; the number still running."""
        if not self._tasks:
            return 0
        _, running = await asyncio.wait(set(self._tasks), timeout=timeout_s)
        return len(running)

    def idle_s(self) -> float:
        """Seconds since the last call ended (since this was made, before any call); 0 while
        a call runs."""
        return 0.0 if self._tasks else time.monotonic() - self._last_ended


@asynccontextmanager
async def stopped_when_idle(
    calls: CallsInFlight, idle_stop_s: float | None, stop: asyncio.Event
) -> AsyncIterator[None]:
    """Within it, ``stop`` is set once ``calls`` has seen no call for ``idle_stop_s``; None:
    never."""
    if idle_stop_s is None:
        yield
        return

    async def watch() -> None:
        idle = calls.idle_s()
        while idle < idle_stop_s:
            await asyncio.sleep(idle_stop_s - idle)
            idle = calls.idle_s()
        log.info("grpc.idle_stop", idle_stop_s=idle_stop_s)
        stop.set()

    watcher = asyncio.create_task(watch())
    try:
        yield
    finally:
        watcher.cancel()
        with suppress(asyncio.CancelledError):
            await watcher
