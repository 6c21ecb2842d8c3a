"""The embedded MongoDB: one process per storage directory, and no server outlives its parent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pymongo import MongoClient

from retrieval.adapters.embedded_mongo import embedded_mongo_server
from retrieval.errors import DataDirectoryInUseError

EXIT_DEADLINE_S = 60.0

PARENT = """
import sys
from pathlib import Path
from pymongo import MongoClient
from retrieval.adapters.embedded_mongo import embedded_mongo_server

with embedded_mongo_server(Path(sys.argv[1])) as uri:
    with MongoClient(uri, w=1, journal=True) as client:
        client.store.marks.insert_one({"_id": "written before the kill"})
    print(uri, flush=True)
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


def test_a_second_server_on_the_storage_is_refused_with_the_holder_named(tmp_path: Path) -> None:
    storage = tmp_path / "mongo"
    with embedded_mongo_server(storage) as uri:
        with pytest.raises(DataDirectoryInUseError) as refused, embedded_mongo_server(storage):
            pass
        assert refused.value.pid == os.getpid()
        assert str(storage) in str(refused.value)
        with MongoClient(uri) as client:
            assert client.admin.command("ping")["ok"] == 1
    assert len(servers_on(storage)) == 0


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
    while server in servers_on(storage) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert server not in servers_on(storage)

    with embedded_mongo_server(storage) as uri, MongoClient(uri) as client:
        assert client.store.marks.find_one() == {"_id": "written before the kill"}
