"""Threads of their own for a local model's calls, which release the GIL and take tens of
milliseconds or more each.

Calls wait in one queue and ``count`` threads take them in arrival order: a thread that
finishes a call starts the next waiting one at once, without a round trip through the event
loop, which may be busy with other callers' work for a millisecond or two. The caller hands
over more calls than there are threads (``PriorityEmbedder``'s turns) to keep the threads fed.

Separate from the loop's default executor, so the model never holds the worker threads that
file writes and index searches need, nor they the model. The threads are daemons: a call
nobody waits for any more (its caller cancelled, the process shutting down) never holds the
process's exit. A call whose caller was cancelled before a thread took it does not run.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any

Call = tuple[asyncio.AbstractEventLoop, asyncio.Future[Any], Callable[..., Any], tuple[Any, ...]]


class ModelThreads:
    def __init__(self, count: int, name: str) -> None:
        if count < 1:
            raise ValueError(f"a model needs at least one thread, got {count}")
        self._count = count
        self._name = name
        self._calls: queue.SimpleQueue[Call | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._starting = threading.Lock()

    async def run(self, function: Callable[..., Any], *args: Any) -> Any:
        """``function(*args)`` on one of the threads, once the calls before it have started;
        the threads start with the first call."""
        if len(self._threads) < self._count:
            self._start()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._calls.put((loop, future, function, args))
        return await future

    def close(self) -> None:
        """The threads end once the calls handed over before have run; a later call starts
        them again."""
        with self._starting:
            for _ in self._threads:
                self._calls.put(None)
            self._threads = []

    def _start(self) -> None:
        with self._starting:
            while len(self._threads) < self._count:
                thread = threading.Thread(
                    target=self._work, name=f"{self._name}-{len(self._threads)}", daemon=True
                )
                thread.start()
                self._threads.append(thread)

    def _work(self) -> None:
        while (call := self._calls.get()) is not None:
            loop, future, function, args = call
            if future.cancelled():
                continue
            try:
                outcome: tuple[Any, BaseException | None] = (function(*args), None)
            except BaseException as error:  # handed to the caller, who raises it
                outcome = (None, error)
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits
                loop.call_soon_threadsafe(settle, future, *outcome)


def settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # cancelled while the call ran
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)
