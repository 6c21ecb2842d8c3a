"""The calls a server is answering, so that shutdown waits for the ones it cancelled.

``grpc.aio.Server.stop`` returns as soon as it has cancelled the calls still running at the
end of the grace period, before their tasks have run what cancellation runs: an ingestion
undoing a write it had begun. Closing the stores then would make that undo fail and leave the
documents pending until the next write or ``reconcile``; ``CallsInFlight.ended`` waits for it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc

from retrieval.grpc.interceptors import Behaviour, CallInterceptor


class CallsInFlight(CallInterceptor):
    """Keeps the task of every call (but bidirectional streams) until the call ends."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def wrap(self, behaviour: Behaviour, details: grpc.HandlerCallDetails) -> Behaviour:
        async def tracked(request: Any, context: grpc.aio.ServicerContext) -> Any:
            task = asyncio.current_task()
            assert task is not None
            self._tasks.add(task)
            try:
                return await behaviour(request, context)
            finally:
                self._tasks.discard(task)

        return tracked

    async def ended(self, timeout_s: float) -> int:
        """Wait up to ``timeout_s`` for every call in flight to end; the number still running."""
        if not self._tasks:
            return 0
        _, running = await asyncio.wait(set(self._tasks), timeout=timeout_s)
        return len(running)
