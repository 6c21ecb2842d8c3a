"""One process per data directory: the command line is refused while another process holds
the embedded index or the embedded MongoDB's storage, and it names that process; a command
that ``retrieval serve`` answers is sent to the server that holds it instead."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from pymongo import MongoClient

CLI = Path(sys.executable).with_name("retrieval")

FROST = """---
document_id: frost-protection
title: Frost protection
domain: weather_patterns
---
# Frost protection

Ground frost scorches the plucking table of tea bushes on clear, still winter nights.
"""

MONGO_HOLDER = """
import sys
from pathlib import Path
from retrieval.adapters.mongo.embedded_supervisor import EmbeddedMongoSupervisor
from retrieval.logging import configure_logging

configure_logging("WARNING")  # on stderr: stdout says it serves
with EmbeddedMongoSupervisor(Path(sys.argv[1])):
    print("serving", flush=True)
    sys.stdin.read()
"""


@pytest.fixture
def environment(tmp_path: Path, mongo_uri: str) -> dict[str, str]:
    """The embedded index under ``tmp_path`` and a database of its own on the external server."""
    (tmp_path / "frost.md").write_text(FROST)
    return os.environ | {
        "RETRIEVAL_DATA_DIR": str(tmp_path / "data"),
        "RETRIEVAL_MONGODB_URI": mongo_uri,
        "RETRIEVAL_MONGODB_DATABASE": f"one_writer_{uuid.uuid4().hex[:12]}",
        "RETRIEVAL_LOG_FORMAT": "json",
        "RETRIEVAL_GRPC_HOST": "127.0.0.1",
        "RETRIEVAL_GRPC_PORT": "0",
        "COLUMNS": "300",
    }


@pytest.fixture
def server(tmp_path: Path, environment: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    """``retrieval serve`` on the data directory, once it serves."""
    with subprocess.Popen(
        [str(CLI), "serve"], cwd=tmp_path, env=environment, stderr=subprocess.PIPE, text=True
    ) as process:
        assert process.stderr is not None
        output = []
        for line in process.stderr:
            output.append(line)
            if line.startswith("{") and json.loads(line)["event"] == "grpc.serving":
                break
        else:
            pytest.fail(f"the server exited with {process.wait()}:\n{''.join(output)}")
        yield process
        process.send_signal(signal.SIGTERM)


def run(
    tmp_path: Path, environment: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CLI), *args],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=180,
    )


def ingest(tmp_path: Path, environment: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run(tmp_path, environment, "ingest", "frost.md", "--namespace", "tea")


def stored_chunks(environment: dict[str, str]) -> int:
    with MongoClient(environment["RETRIEVAL_MONGODB_URI"]) as client:
        return client[environment["RETRIEVAL_MONGODB_DATABASE"]]["chunks"].count_documents({})


def test_while_a_server_holds_the_index_ingest_goes_to_it_and_reconcile_is_refused(
    tmp_path: Path, environment: dict[str, str], server: subprocess.Popen[str]
) -> None:
    refused = run(tmp_path, environment, "reconcile", "--namespace", "tea")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    message = " ".join(refused.stderr.split())
    assert str(tmp_path / "data" / "index") in message
    assert f"in use by process {server.pid}" in message
    assert "serve" in message
    assert "Traceback" not in refused.stdout

    sent = ingest(tmp_path, environment)
    assert sent.returncode == 0, sent.stdout + sent.stderr
    assert stored_chunks(environment) > 0
    server.send_signal(signal.SIGTERM)
    assert server.wait(timeout=60) == 0
    again = ingest(tmp_path, environment)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "1 unchanged" in again.stdout


def test_ingest_is_refused_while_another_process_runs_the_embedded_mongodb(
    tmp_path: Path, environment: dict[str, str]
) -> None:
    del environment["RETRIEVAL_MONGODB_URI"]
    storage = tmp_path / "data" / "mongo"
    holder = [sys.executable, "-c", MONGO_HOLDER, str(storage)]
    with subprocess.Popen(holder, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as process:
        assert process.stdout is not None
        assert process.stdout.readline() == b"serving\n"
        refused = ingest(tmp_path, environment)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    message = " ".join(refused.stderr.split())
    assert f"{storage} is in use by process {process.pid}" in message
    assert "Traceback" not in refused.stdout
    assert not list((tmp_path / "data" / "index").glob("*.log"))
