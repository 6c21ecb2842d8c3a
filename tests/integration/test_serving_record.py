"""Where a running server listens, recorded beside its data directory: read back while it
runs, gone once it stops, ignored once its process has ended."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from retrieval.grpc.serving_record import (
    RECORD_FILE,
    ServingRecord,
    local_address,
    recorded,
    serving_record,
)


def ended_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_record_is_read_back_while_its_server_serves_and_removed_after(tmp_path: Path) -> None:
    parent = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        record = ServingRecord(address="127.0.0.1:5005", pid=parent.pid, tls=False, auth=True)
        with recorded(tmp_path, record):
            assert serving_record(tmp_path) == record
        assert serving_record(tmp_path) is None
        assert not (tmp_path / RECORD_FILE).exists()
    finally:
        parent.kill()
        parent.wait()


def test_a_record_left_by_a_killed_server_or_this_process_is_ignored(tmp_path: Path) -> None:
    for pid in (ended_pid(), os.getpid()):
        record = {"address": "127.0.0.1:5005", "pid": pid, "tls": False, "auth": False}
        (tmp_path / RECORD_FILE).write_text(json.dumps(record))
        assert serving_record(tmp_path) is None
    (tmp_path / RECORD_FILE).write_text("{not json")
    assert serving_record(tmp_path) is None


def test_a_server_bound_to_every_interface_is_reached_on_loopback() -> None:
    assert local_address("0.0.0.0", 50051) == "127.0.0.1:50051"
    assert local_address("::", 50051) == "127.0.0.1:50051"
    assert local_address("127.0.0.1", 7000) == "127.0.0.1:7000"
