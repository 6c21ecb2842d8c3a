"""The embedded MongoDB: one process per storage directory, no server outlives its parent, and
a server that dies is reaped and started again, a bounded number of times."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pymongo import MongoClient

from retrieval.adapters.mongo.embedded_supervisor import EmbeddedMongoSupervisor
from retrieval.errors import DataDirectoryInUseError
from retrieval.retries import RetryPolicy
from retrieval_testkit.embedded_mongo import kill_server, restarted

EXIT_DEADLINE_S = 60.0
STAYS_DOWN_S = 3.0
FORKS_RUNNING_PYTHON: list[int] = []
os.register_at_fork(before=lambda: FORKS_RUNNING_PYTHON.append(os.getpid()))

PARENT = """
import sys
from pathlib import Path
from pymongo import MongoClient
from retrieval.adapters.mongo.embedded_supervisor import EmbeddedMongoSupervisor
from retrieval.logging import configure_logging

configure_logging("WARNING")  # on stderr: stdout says the URI
with EmbeddedMongoSupervisor(Path(sys.argv[1])) as server:
    with MongoClient(server.uri, w=1, journal=True) as client:
        client.store.marks.insert_one({"_id": "written before the kill"})
    print(server.uri, flush=True)
    sys.stdin.read()
"""


DEAF_SERVER = """
import signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("listening", flush=True)
time.sleep(600)
"""
"""A server that cannot act on SIGTERM, as one whose stop handler is already under way."""

STARTS_A_DEAF_SERVER = """
import sys
from pathlib import Path
from retrieval.adapters.data_directory.lock import DirectoryLock
from retrieval.adapters.mongo.embedded_server import start_server

server = start_server(sys.argv[1], Path(sys.argv[2]), 0, DirectoryLock(Path(sys.argv[2])))
print(server.pid, flush=True)
sys.stdin.read()
"""


def servers_on(storage: Path) -> list[int]:
    """Live (not zombie) server processes started with ``--storage-path storage``."""
    option = [b"--storage-path", str(storage).encode()]
    found = []
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
        except (FileNotFoundError, ProcessLookupError, NotADirectoryError, PermissionError):
            continue
        given = any(command[i : i + 2] == option for i in range(len(command) - 1))
        if given and state != "Z":
            found.append(int(entry.name))
    return found


def running(pid: int) -> bool:
    """Whether process ``pid`` has not finished exiting. Its command line goes before its open
    files do, so a process that no longer shows one may still hold the storage's lock; a zombie
    holds nothing."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def test_a_second_server_on_the_storage_is_refused_with_the_holder_named(tmp_path: Path) -> None:
    storage = tmp_path / "mongo"
    with EmbeddedMongoSupervisor(storage) as server:
        with pytest.raises(DataDirectoryInUseError) as refused:
            EmbeddedMongoSupervisor(storage).start()
        assert refused.value.pid == os.getpid()
        assert str(storage) in str(refused.value)
        with MongoClient(server.uri) as client:
            assert client.admin.command("ping")["ok"] == 1
    assert len(servers_on(storage)) == 0


def test_the_server_is_out_of_reach_of_the_terminals_ctrl_c(tmp_path: Path) -> None:
    """A Ctrl-C goes to the terminal's whole foreground process group; the server is in a
    session of its own, so the interrupted command can still roll back through it."""
    with EmbeddedMongoSupervisor(tmp_path / "mongo") as server:
        assert server.pid is not None
        assert os.getsid(server.pid) != os.getsid(0)
        assert os.getpgid(server.pid) != os.getpgid(0)


def test_starting_the_server_runs_no_python_between_fork_and_exec(tmp_path: Path) -> None:
    """Python code run in a fork beside gRPC's threads crashed a whole test run (SIGSEGV): the
    server is started by ``exec`` alone, which runs none of Python's fork hooks."""
    forks_before = len(FORKS_RUNNING_PYTHON)
    with EmbeddedMongoSupervisor(tmp_path / "mongo") as server, MongoClient(server.uri) as client:
        assert client.admin.command("ping")["ok"] == 1
    assert len(FORKS_RUNNING_PYTHON) == forks_before


@pytest.mark.skipif(sys.platform != "linux", reason="the parent-death signal is Linux's")
def test_a_killed_parent_takes_its_server_along(tmp_path: Path) -> None:
    storage = tmp_path / "mongo"
    parent = [sys.executable, "-c", PARENT, str(storage)]
    with subprocess.Popen(parent, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as process:
        assert process.stdout is not None
        assert process.stdout.readline().startswith(b"mongodb://")
        (server,) = servers_on(storage)
        process.send_signal(signal.SIGKILL)

    deadline = time.monotonic() + EXIT_DEADLINE_S
    while running(server) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not running(server)

    with EmbeddedMongoSupervisor(storage) as server, MongoClient(server.uri) as client:
        assert client.store.marks.find_one() == {"_id": "written before the kill"}


@pytest.mark.skipif(sys.platform != "linux", reason="the parent-death signal is Linux's")
def test_a_killed_parent_takes_along_a_server_deaf_to_sigterm(tmp_path: Path) -> None:
    """A parent killed while its server is stopping must not leave it behind: the embedded
    server deadlocks on a second SIGTERM, so the parent's death is a SIGKILL."""
    deaf = tmp_path / "deaf-server"
    deaf.write_text(f"#!{sys.executable}\n{DEAF_SERVER}")
    deaf.chmod(0o755)
    starter = [sys.executable, "-c", STARTS_A_DEAF_SERVER, str(deaf), str(tmp_path / "mongo")]
    with subprocess.Popen(starter, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as parent:
        assert parent.stdout is not None
        server = int(parent.stdout.readline())
        while "listening" not in (tmp_path / "mongo.log").read_text():
            time.sleep(0.05)
        parent.send_signal(signal.SIGKILL)

    deadline = time.monotonic() + EXIT_DEADLINE_S
    while running(server) and time.monotonic() < deadline:
        time.sleep(0.1)
    left_running = running(server)
    if left_running:
        os.kill(server, signal.SIGKILL)
    assert not left_running


async def test_a_killed_server_is_reaped_and_started_again_on_its_port(tmp_path: Path) -> None:
    storage = tmp_path / "mongo"
    with (
        EmbeddedMongoSupervisor(storage) as server,
        MongoClient(server.uri, journal=True) as client,
    ):
        client.store.marks.insert_one({"_id": "before"})
        uri = server.uri
        killed = await kill_server(server)
        assert not Path(f"/proc/{killed}").exists(), "the dead server was not reaped"
        assert "exited with code -9" in (server.down_reason() or "")
        assert await restarted(server) != killed
        assert (server.uri, server.down_reason()) == (uri, None)
        client.store.marks.insert_one({"_id": "after"})
        assert [mark["_id"] for mark in client.store.marks.find()] == ["before", "after"]
        last = server.pid
    assert server.pid is None
    assert servers_on(storage) == []
    assert last is not None
    assert not Path(f"/proc/{last}").exists()


async def test_restarts_are_bounded_then_the_server_stays_down(tmp_path: Path) -> None:
    storage = tmp_path / "mongo"
    quick = RetryPolicy(initial_backoff=0.05, max_backoff=0.05)
    with EmbeddedMongoSupervisor(storage, max_restarts=2, backoff=quick) as server:
        for _ in range(2):
            await kill_server(server)
            await restarted(server)
        await kill_server(server)
        await asyncio.sleep(STAYS_DOWN_S)
        assert server.pid is None
        assert servers_on(storage) == []
        assert "gave up after 2 restarts" in (server.down_reason() or "")
