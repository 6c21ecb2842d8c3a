"""Starts the embedded MongoDB wire-protocol server (SecantusDB) as a child process.

Used whenever no MongoDB URI is configured, under ``EmbeddedMongoSupervisor`` (which restarts
it when it dies). The server keeps its data under the given directory (WiredTiger), so chunks
survive restarts like vectors do.

One process at a time owns that directory: the parent locks it (``DirectoryLock``) before
starting the server and shares the lock with it, so the lock lasts until both have exited.
On Linux the server is also killed when the thread that started it ends, so a killed
command (even by SIGKILL) never leaves a server holding the WiredTiger files: it is started
through ``parent_death.py``, so no Python code runs between ``fork`` and ``exec``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import TypeAlias

from retrieval.adapters.data_directory.disk_usage import directory_bytes
from retrieval.adapters.data_directory.lock import DirectoryLock
from retrieval.domain.collection_health import Footprint
from retrieval.errors import BackendNotConfiguredError, BackendUnavailableError

SERVER_COMMAND = "secantusd-py"
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0
PARENT_DEATH_SCRIPT = Path(__file__).with_name("parent_death.py")
LOG_FILE = "mongo.log"
READ_BATCH = 32
"""Most ids to ask this server for in one ``$in``. It checks each document it finds against
the whole ``$in`` list in Python, so one find of n ids costs it about n² comparisons: 100 ids
in four finds of 25 take about half the server's CPU time of one find of 100
(docs/performance.md, "Profile of the hot paths")."""

ServerProcess: TypeAlias = subprocess.Popen[bytes]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def server_executable() -> str:
    beside_python = Path(sys.executable).with_name(SERVER_COMMAND)
    found = str(beside_python) if beside_python.exists() else shutil.which(SERVER_COMMAND)
    if found is None:
        raise BackendNotConfiguredError(
            "no MongoDB URI is set and the embedded server is not installed: "
            "set RETRIEVAL_MONGODB_URI or install the 'embedded' extra"
        )
    return found


def stopping_with_parent(command: list[str]) -> list[str]:
    """``command`` run so that Linux SIGKILLs it when the calling thread ends. The signal
    follows the thread that started the child: start it from one that outlives it
    (``EmbeddedMongoSupervisor``'s thread does). Elsewhere than Linux there is nothing to ask."""
    if sys.platform != "linux":
        return command
    guard = [sys.executable, "-I", "-S", str(PARENT_DEATH_SCRIPT), str(os.getpid())]
    return [*guard, *command]


def start_server(executable: str, storage: Path, port: int, lock: DirectoryLock) -> ServerProcess:
    """The server on ``127.0.0.1:port`` with its data in ``storage`` and its output appended to
    ``server_log(storage)``; it shares ``lock`` and stops when the calling thread ends."""
    with server_log(storage).open("ab") as log_file:
        return subprocess.Popen(
            stopping_with_parent([
                executable,
                "--host", "127.0.0.1",
                "--port", str(port),
                "--storage-path", str(storage),
                "--log-level", "WARNING",
            ]),
            stdout=log_file,
            stderr=subprocess.STDOUT,
            pass_fds=(lock.fileno(),),
            # Out of the terminal's process group: a Ctrl-C interrupts the command, which
            # still needs its database to finish or roll back the write under way.
            start_new_session=True,
        )  # fmt: skip


def server_log(storage: Path) -> Path:
    return storage.parent / LOG_FILE


def wait_until_listening(process: ServerProcess, port: int, log: Path) -> None:
    """Return once the server accepts connections; ``BackendUnavailableError`` if it exits
    first or does not listen within ``START_TIMEOUT_S`` (it is left running: stop it)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise BackendUnavailableError(
                f"embedded MongoDB exited with code {process.returncode}; see {log}"
            )
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise BackendUnavailableError(f"embedded MongoDB did not start in {START_TIMEOUT_S:.0f} s")


def stop_server(process: ServerProcess) -> None:
    """SIGTERM, then SIGKILL after ``STOP_TIMEOUT_S``; returns once it is reaped."""
    process.terminate()
    try:
        process.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class EmbeddedMongoStorage:
    """The embedded server's data directory, measured as a store's footprint; its memory
    belongs to another process and is not measured."""

    def __init__(self, storage: Path) -> None:
        self._storage = storage

    async def footprint(self) -> Footprint:
        disk = await asyncio.to_thread(directory_bytes, self._storage)
        return Footprint(store="mongodb (embedded)", disk_bytes=disk, memory_bytes=None)
