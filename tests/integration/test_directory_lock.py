"""A data directory has one holder at a time, across processes and within one."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import pytest

from retrieval.adapters.data_directory.lock import LOCK_FILE, DirectoryLock
from retrieval.errors import DataDirectoryInUseError
from retrieval.grpc.errors import status_of

HOLDER = """
import sys
from pathlib import Path
from retrieval.adapters.data_directory.lock import DirectoryLock

lock = DirectoryLock(Path(sys.argv[1]))
print("locked", flush=True)
sys.stdin.read()
"""


@contextmanager
def holding(script: str, *args: str) -> Iterator[subprocess.Popen[str]]:
    """A Python process running ``script`` with ``args``, once it says it holds the lock."""
    with subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stdout is not None
        assert process.stdout.readline() == "locked\n"
        yield process


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding ``tmp_path / "data"`` until it is killed."""
    # A long command line (a shell glob over many files) must still name the holder.
    with holding(HOLDER, str(tmp_path / "data"), "x" * 5000, "--holder-mark") as process:
        yield process
        process.kill()


def test_a_second_process_is_refused_with_the_holder_named(
    tmp_path: Path, holder: subprocess.Popen[str]
) -> None:
    with pytest.raises(DataDirectoryInUseError) as refused:
        DirectoryLock(tmp_path / "data")
    assert refused.value.directory == tmp_path / "data"
    assert refused.value.pid == holder.pid
    assert refused.value.command is not None
    assert "--holder-mark" in refused.value.command
    message = str(refused.value)
    assert str(tmp_path / "data") in message
    assert f"process {holder.pid}" in message
    assert "--holder-mark" in message
    assert "Stop that process" in message
    assert "RetrievalClient" in message


def test_a_killed_holder_leaves_no_stale_lock(
    tmp_path: Path, holder: subprocess.Popen[str]
) -> None:
    holder.kill()
    holder.wait()
    with DirectoryLock(tmp_path / "data") as lock:
        assert lock.directory == tmp_path / "data"


SHARING_HOLDER = """
import subprocess, sys
from pathlib import Path
from retrieval.adapters.data_directory.lock import DirectoryLock

lock = DirectoryLock(Path(sys.argv[1]))
code = "import time; time.sleep(1.0)"
subprocess.Popen([sys.executable, "-c", code], pass_fds=[lock.fileno()])
print("locked", flush=True)
sys.stdin.read()
"""


def test_a_killed_holder_s_directory_is_taken_once_the_children_sharing_its_lock_end(
    tmp_path: Path,
) -> None:
    """As the embedded MongoDB server, which holds the lock with its parent, ends a moment
    after a SIGKILL of ``retrieval serve``."""
    with holding(SHARING_HOLDER, str(tmp_path / "data")) as process:
        process.kill()
        process.wait()
    with DirectoryLock(tmp_path / "data") as lock:
        assert lock.directory == tmp_path / "data"


def test_a_second_lock_in_the_same_process_is_refused(tmp_path: Path) -> None:
    with DirectoryLock(tmp_path), pytest.raises(DataDirectoryInUseError, match="process"):
        DirectoryLock(tmp_path)


def test_a_released_directory_can_be_locked_again(tmp_path: Path) -> None:
    first = DirectoryLock(tmp_path)
    first.release()
    first.release()
    with DirectoryLock(tmp_path):
        pass


def test_a_dropped_lock_is_released(tmp_path: Path) -> None:
    DirectoryLock(tmp_path)
    with DirectoryLock(tmp_path):
        pass


def test_the_directory_is_created(tmp_path: Path) -> None:
    with DirectoryLock(tmp_path / "new" / "store"):
        assert (tmp_path / "new" / "store" / LOCK_FILE).is_file()


def test_a_holder_that_recorded_nothing_is_another_process(tmp_path: Path) -> None:
    with DirectoryLock(tmp_path):
        (tmp_path / LOCK_FILE).write_text("")
        with pytest.raises(DataDirectoryInUseError, match="in use by another process") as refused:
            DirectoryLock(tmp_path)
    assert (refused.value.pid, refused.value.command) == (None, None)


def test_a_grpc_call_that_meets_it_ends_unavailable(tmp_path: Path) -> None:
    with DirectoryLock(tmp_path), pytest.raises(DataDirectoryInUseError) as refused:
        DirectoryLock(tmp_path)
    code, message, _ = status_of(refused.value)
    assert code is grpc.StatusCode.UNAVAILABLE
    assert str(tmp_path) not in message
