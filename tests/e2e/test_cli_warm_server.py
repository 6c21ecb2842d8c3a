"""The command line starts a server for its data directory when none serves it, sends its
commands there, and leaves it warm for the next ones (``retrieval.cli.warm``). Real
processes: the commands and the servers they start, each killed at the end."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest

from retrieval.adapters.data_directory.lock import alive
from retrieval.cli.warm import LOG, STARTED
from retrieval.grpc.serving_record import ServingRecord, serving_record

CLI = Path(sys.executable).with_name("retrieval")
WITHERING = """---
title: Withering
domain: plant_diseases
---
# Withering

Fresh leaf is withered on troughs until it loses about a third of its moisture.
"""
ROLLING = """---
title: Rolling
domain: plant_diseases
---
# Rolling

Withered leaf is rolled to break its cells and start oxidation.
"""
QUESTION = ("query", "how is fresh leaf withered", "-n", "tea", "--json")
STOPPED_S = 60.0


def environment(data: Path, **settings: str) -> dict[str, str]:
    """Commands on ``data``, the warm server on unless ``settings`` turn it off."""
    warm = {"RETRIEVAL_DATA_DIR": str(data), "RETRIEVAL_WARM_SERVER": "1", "COLUMNS": "120"}
    return os.environ | warm | settings


async def cli(data: Path, *args: str, **settings: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        str(CLI),
        *args,
        cwd=data.parent,
        env=environment(data, **settings),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    return process.returncode or 0, out.decode(), err.decode()


async def answered(data: Path, **settings: str) -> None:
    code, out, err = await cli(data, *QUESTION, **settings)
    assert code == 0, err
    assert json.loads(out)["matches"][0]["title"] == "Withering"


def server_log(data: Path, event: str) -> list[dict[str, Any]]:
    """The entries logging ``event`` in the started server's log."""
    lines = (data / LOG).read_text().splitlines()
    entries = [json.loads(line) for line in lines if line.startswith("{")]
    return [entry for entry in entries if entry.get("event") == event]


def serving(data: Path) -> ServingRecord:
    record = serving_record(data)
    assert record is not None, "a server serves the data directory"
    return record


async def ended(pid: int) -> None:
    deadline = time.monotonic() + STOPPED_S
    while alive(pid):
        assert time.monotonic() < deadline, f"process {pid} still runs"
        await asyncio.sleep(0.1)


def started_pids(data: Path) -> set[int]:
    """The server serving ``data`` and the last one a command started there."""
    pids = {record.pid} if (record := serving_record(data)) else set()
    with suppress(OSError, ValueError):
        pids.add(json.loads((data / STARTED).read_text())["pid"])
    return pids


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data directory holding one document in namespace ``tea``, written by a command in its
    own process; the tests read copies of it."""
    root = tmp_path_factory.mktemp("warm")
    (root / "withering.md").write_text(WITHERING)
    done = subprocess.run(
        [str(CLI), "ingest", "withering.md", "-n", "tea"],
        cwd=root,
        env=environment(root / "data", RETRIEVAL_WARM_SERVER="0"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return root / "data"


@pytest.fixture
def data(tmp_path: Path, ingested: Path) -> Iterator[Path]:
    """A copy of ``ingested`` of the test's own; the servers started on it are killed with
    their children (their session) at the end."""
    data = tmp_path / "data"
    shutil.copytree(ingested, data)
    (tmp_path / "rolling.md").write_text(ROLLING)
    yield data
    for pid in started_pids(data):
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)


async def test_a_first_query_starts_a_server_and_the_next_commands_are_sent_to_it(
    data: Path,
) -> None:
    await answered(data)
    started = serving(data)
    assert started.address.startswith("127.0.0.1:")

    await answered(data)
    code, out, err = await cli(data, "ingest", str(data.parent / "rolling.md"), "-n", "tea")
    assert code == 0, err
    assert "1 created" in out
    code, out, err = await cli(data, "documents", "-n", "tea", "--json")
    assert code == 0, err
    assert sorted(document["title"] for document in json.loads(out)) == ["Rolling", "Withering"]

    assert serving(data) == started
    assert len(server_log(data, "grpc.serving")) == 1
    assert server_log(data, "ingest.group"), "the server wrote the document"


async def test_commands_run_at_once_start_one_server(data: Path) -> None:
    await asyncio.gather(answered(data), answered(data), answered(data))

    assert len(server_log(data, "grpc.serving")) == 1
    assert started_pids(data) == {serving(data).pid}


async def test_a_started_server_stops_by_itself_once_idle(data: Path) -> None:
    await answered(data, RETRIEVAL_IDLE_STOP_S="2")
    pid = serving(data).pid

    await ended(pid)

    assert serving_record(data) is None
    [stopped] = server_log(data, "grpc.idle_stop")
    assert stopped["idle_stop_s"] == 2


async def test_turned_off_a_command_answers_in_its_own_process(data: Path) -> None:
    await answered(data, RETRIEVAL_WARM_SERVER="0")

    assert serving_record(data) is None
    assert not (data / STARTED).exists()
    assert not (data / LOG).exists()


async def test_stop_stops_the_server(data: Path) -> None:
    await answered(data)
    pid = serving(data).pid

    code, out, err = await cli(data, "stop")
    assert code == 0, err
    assert f"(pid {pid})" in out
    assert not alive(pid)
    code, out, _ = await cli(data, "stop")
    assert (code, out.strip()) == (0, f"no server serves {data}")


async def test_a_command_that_holds_the_directory_itself_stops_the_started_server(
    data: Path,
) -> None:
    await answered(data)
    pid = serving(data).pid

    code, _, err = await cli(data, "reconcile", "-n", "tea")
    assert code == 0, err

    assert not alive(pid)


async def test_a_command_with_other_settings_is_answered_by_a_server_with_them(
    data: Path,
) -> None:
    await answered(data)
    first = serving(data).pid

    await answered(data, RETRIEVAL_RESULT_CACHE_ENTRIES="0")

    assert not alive(first)
    assert serving(data).pid != first
