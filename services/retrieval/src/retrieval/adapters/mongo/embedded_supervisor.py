"""Keeps the embedded MongoDB running, and lets calls fail at once while it does not run.

``EmbeddedMongoSupervisor`` starts the server (``retrieval.adapters.mongo.embedded_server``) from a
thread of its own, which waits on it: when it dies, it is reaped at once (no zombie) and
started again on the same port and data directory after a pause (``RESTART_BACKOFF``: 0.5 s,
then doubling up to 8 s). A client keeps its URI, and PyMongo finds the server again by
itself. At most ``MAX_RESTARTS`` restarts within ``RESTART_WINDOW_S``: the next death is
logged as an error (``embedded_mongo.gave_up``) and the server stays down; every MongoDB call
then fails at once with ``BackendUnavailableError`` and the gRPC health service says
NOT_SERVING until the process is restarted. Stopping the supervisor stops the server, and
nothing restarts it after that.

``FailFastMongoClient`` is the client of the embedded server. PyMongo waits for a server for
the whole deadline of an operation (``timeoutMS``, or ``pymongo.timeout``; it ignores
``serverSelectionTimeoutMS`` then), so each call made while the server is down would wait
10 s (60 s for a bulk write) before failing. This client refuses to wait while the supervisor
knows the server is not running, with the error PyMongo raises when no server can be found,
which the adapters translate to ``BackendUnavailableError``.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any

import structlog
from pymongo import AsyncMongoClient
from pymongo.errors import ServerSelectionTimeoutError

from retrieval.adapters.data_directory.lock import DirectoryLock
from retrieval.adapters.mongo.embedded_server import (
    ServerProcess,
    free_port,
    server_executable,
    server_log,
    start_server,
    stop_server,
    wait_until_listening,
)
from retrieval.errors import BackendUnavailableError
from retrieval.retries import RetryPolicy

log = structlog.get_logger("retrieval")

MAX_RESTARTS = 5
RESTART_WINDOW_S = 60.0
RESTART_BACKOFF = RetryPolicy(initial_backoff=0.5, max_backoff=8.0)
"""The pause before the n-th restart within the window is ``longest_backoff(n - 1)``."""


@dataclass(eq=False)
class EmbeddedMongoSupervisor:
    """Runs the embedded server on one loopback port between ``start`` and ``stop`` (or as a
    context manager), restarting it when it dies, as the module says.

    ``start`` raises ``DataDirectoryInUseError`` naming the holder when another process uses
    ``storage``, ``BackendUnavailableError`` when the server does not start.
    """

    storage: Path
    _: KW_ONLY
    max_restarts: int = MAX_RESTARTS
    window_s: float = RESTART_WINDOW_S
    backoff: RetryPolicy = RESTART_BACKOFF
    _port: int = field(init=False, default=0)
    _lock: DirectoryLock | None = field(init=False, default=None)
    _thread: threading.Thread | None = field(init=False, default=None)
    _stopping: threading.Event = field(init=False, default_factory=threading.Event)
    _guard: threading.Lock = field(init=False, default_factory=threading.Lock)
    _process: ServerProcess | None = field(init=False, default=None)
    _serving: bool = field(init=False, default=False)
    _down: str = field(init=False, default="the embedded MongoDB has not started")
    _restarts: deque[float] = field(init=False, default_factory=deque)

    @property
    def uri(self) -> str:
        return f"mongodb://127.0.0.1:{self._port}/?directConnection=true"

    @property
    def pid(self) -> int | None:
        """The server's process id while it accepts connections, else None."""
        process = self._process
        return process.pid if process is not None and self._serving else None

    def down_reason(self) -> str | None:
        """Why the server does not accept connections now; None while it does."""
        return None if self._serving else self._down

    def start(self) -> None:
        executable = server_executable()
        self._lock = DirectoryLock(self.storage)
        self._port = free_port()
        first: Future[None] = Future()
        self._thread = threading.Thread(
            target=self._supervise, args=(executable, first), name="embedded-mongo", daemon=True
        )
        self._thread.start()
        try:
            first.result()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop the server (SIGTERM, SIGKILL after ``STOP_TIMEOUT_S``); no restart follows."""
        self._stopping.set()
        with self._guard:
            process = self._process
        if process is not None:
            stop_server(process)
        if self._thread is not None:
            self._thread.join()
        self._serving = False
        self._down = "the embedded MongoDB was stopped"
        if self._lock is not None:
            self._lock.release()

    def __enter__(self) -> EmbeddedMongoSupervisor:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _supervise(self, executable: str, first: Future[None]) -> None:
        """The thread: run the server, wait for it, restart it. The server stops (Linux's
        parent-death signal) if this thread ends before it."""
        try:
            while not self._stopping.is_set():
                try:
                    code = self._run(executable, first)
                except BackendUnavailableError as error:
                    if not first.done():
                        first.set_exception(error)
                        return
                    reason = str(error)
                else:
                    reason = f"the embedded MongoDB exited with code {code}"
                if self._stopping.is_set() or not self._wait_to_restart(reason):
                    return
        finally:
            if not first.done():
                first.set_exception(BackendUnavailableError("the embedded MongoDB did not start"))

    def _wait_to_restart(self, reason: str) -> bool:
        """Pause before the next restart; False when the budget is spent or on ``stop``."""
        pause = self._pause()
        if pause is None:
            self._down = f"{reason}; gave up after {self.max_restarts} restarts"
            log.error(
                "embedded_mongo.gave_up",
                reason=reason,
                restarts=self.max_restarts,
                window_s=self.window_s,
                log=str(server_log(self.storage)),
            )
            return False
        self._down = f"{reason}; restarting"
        log.warning("embedded_mongo.restarting", reason=reason, pause_s=pause)
        return not self._stopping.wait(pause)

    def _run(self, executable: str, first: Future[None]) -> int | None:
        """Start the server and wait until it exits: its exit code, or None when stopped
        before it started; ``BackendUnavailableError`` when it does not start."""
        with self._guard:
            if self._stopping.is_set():
                return None
            try:
                process = start_server(executable, self.storage, self._port, self._lock_held())
            except (OSError, subprocess.SubprocessError) as error:
                raise BackendUnavailableError(f"embedded MongoDB did not start: {error}") from error
            self._process = process
        try:
            wait_until_listening(process, self._port, server_log(self.storage))
        except BackendUnavailableError:
            stop_server(process)
            raise
        self._serving = True
        if not first.done():
            first.set_result(None)
        log.info("embedded_mongo.serving", pid=process.pid, port=self._port)
        try:
            return process.wait()
        finally:
            self._serving = False

    def _pause(self) -> float | None:
        """The pause before the next restart, counted; None when the budget is spent."""
        now = time.monotonic()
        while self._restarts and now - self._restarts[0] > self.window_s:
            self._restarts.popleft()
        if len(self._restarts) >= self.max_restarts:
            return None
        pause = self.backoff.longest_backoff(len(self._restarts))
        self._restarts.append(now + pause)
        return pause

    def _lock_held(self) -> DirectoryLock:
        if self._lock is None:
            raise RuntimeError("the supervisor has not started")
        return self._lock


class FailFastMongoClient(AsyncMongoClient):
    """An ``AsyncMongoClient`` that selects no server while ``down_reason()`` gives a reason:
    the operation fails at once, as PyMongo fails when no server answers in time.

    ``_select_server`` is PyMongo's own (private) step of every operation, retries included;
    ``test_embedded_mongo_outage.py`` fails if an upgrade of PyMongo bypasses it."""

    def __init__(self, *args: Any, down_reason: Callable[[], str | None], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._down_reason = down_reason

    async def _select_server(self, *args: Any, **kwargs: Any) -> Any:
        reason = self._down_reason()
        if reason is not None:
            raise ServerSelectionTimeoutError(reason)
        return await super()._select_server(*args, **kwargs)
