"""One process at a time per data directory: an exclusive, non-blocking lock on it.

The lock is ``flock`` on ``<directory>/.lock``. The kernel releases it when every descriptor of
that open file is closed, so a holder that dies, even by SIGKILL, never leaves a stale lock. The
file's content (pid and command line of the holder) feeds the message of a refused process, and
tells a holder that has died from one that runs: the children a holder shares the lock with (the
embedded MongoDB server) end with it, a moment later, so while the recorded holder is gone the
lock is tried again for up to ``ORPHANS_END_S``. A second lock on the same directory is refused
in the same process too.
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import sys
import time
import weakref
from collections.abc import Callable
from pathlib import Path

from retrieval.errors import DataDirectoryInUseError

LOCK_FILE = ".lock"
ORPHANS_END_S = 10.0
RETRY_S = 0.05


class DirectoryLock:
    """Holds ``directory`` (created if missing) from construction until ``release``.

    Raises ``DataDirectoryInUseError`` naming the holder when another lock holds it. Dropping
    the object releases the lock as well; ``fileno`` lets a child process share it.
    """

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + ORPHANS_END_S
        while not locked(descriptor):
            pid, command = recorded_holder(descriptor)
            if pid is None or alive(pid) or time.monotonic() > deadline:
                os.close(descriptor)
                raise DataDirectoryInUseError(directory, pid=pid, command=command)
            time.sleep(RETRY_S)
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

    def __exit__(self, *exc_info: object) -> None:
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


def locked(descriptor: int) -> bool:
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def alive(pid: int) -> bool:
    """Whether a process of that pid runs (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recorded_holder(descriptor: int) -> tuple[int | None, str | None]:
    """Pid and command the holder wrote; nothing when it has not written them yet."""
    try:
        holder = json.loads(os.pread(descriptor, os.fstat(descriptor).st_size, 0))
        return int(holder["pid"]), str(holder["command"])
    except (ValueError, KeyError, TypeError):
        return None, None
