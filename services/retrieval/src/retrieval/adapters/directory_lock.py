"""One process at a time per data directory: an exclusive, non-blocking lock on it.

The lock is ``flock`` on ``<directory>/.lock``. The kernel releases it when every descriptor of
that open file is closed, so a holder that dies, even by SIGKILL, never leaves a stale lock. The
file's content (pid and command line of the holder) only feeds the message of a refused process.
A second lock on the same directory is refused in the same process too.
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import sys
import weakref
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from retrieval.errors import DataDirectoryInUseError

LOCK_FILE = ".lock"


class DirectoryLock:
    """Holds ``directory`` (created if missing) from construction until ``release``.

    Raises ``DataDirectoryInUseError`` naming the holder when another lock holds it. Dropping
    the object releases the lock as well; ``fileno`` lets a child process share it.
    """

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            pid, command = recorded_holder(descriptor)
            os.close(descriptor)
            raise DataDirectoryInUseError(directory, pid=pid, command=command) from exc
        os.ftruncate(descriptor, 0)
        holder = {"pid": os.getpid(), "command": shlex.join(sys.argv)}
        os.pwrite(descriptor, json.dumps(holder).encode(), 0)
        self.directory = directory
        self._descriptor = descriptor
        self._release = weakref.finalize(self, os.close, descriptor)

    def fileno(self) -> int:
        return self._descriptor

    def release(self) -> None:
        """Give the directory up; releasing twice does nothing."""
        self._release()

    def __enter__(self) -> DirectoryLock:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()


def hold_and_load(directory: Path, load: Callable[[Path], None]) -> DirectoryLock:
    """Hold ``directory``, then ``load`` what it keeps; released again if loading fails."""
    held = DirectoryLock(directory)
    try:
        load(directory)
    except BaseException:
        held.release()
        raise
    return held


def recorded_holder(descriptor: int) -> tuple[int | None, str | None]:
    """Pid and command the holder wrote; nothing when it has not written them yet."""
    try:
        holder = json.loads(os.pread(descriptor, os.fstat(descriptor).st_size, 0))
        return int(holder["pid"]), str(holder["command"])
    except (ValueError, KeyError, TypeError):
        return None, None
