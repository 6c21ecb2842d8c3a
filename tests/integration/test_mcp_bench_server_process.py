"""The MCP benchmark's server process is stopped however the measurement ends: a failure
while it serves, or a server that exits before it serves."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from retrieval_bench.mcp_overhead import ServerProcess, served_mcp

SERVING = json.dumps({"event": "mcp.serving", "port": 8123})


def python_server(*statements: str) -> list[str]:
    """A stand-in server: ``statements`` run by this Python, one a line."""
    return [sys.executable, "-c", "\n".join(["import sys, time", *statements])]


def exited(pid: int) -> bool:
    """Whether process ``pid`` is gone (reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def failing_measurement(command: list[str], log: Path, started: list[ServerProcess]) -> None:
    """Serve ``command``, note the server in ``started``, and fail while it serves."""
    async with served_mcp(command, os.environ, log) as server:
        started.append(server)
        raise RuntimeError("measurement failed")


async def test_a_failure_while_serving_stops_the_server(tmp_path: Path) -> None:
    serving_forever = python_server(
        f"print({SERVING!r}, file=sys.stderr, flush=True)", "time.sleep(600)"
    )
    started: list[ServerProcess] = []
    with pytest.raises(RuntimeError, match="measurement failed"):
        await failing_measurement(serving_forever, tmp_path / "server.log", started)
    assert started[0].port == 8123
    assert exited(started[0].pid)


async def test_a_server_ignoring_sigterm_is_killed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr("retrieval_bench.mcp_overhead.STOP_S", 0.5)
    stubborn = python_server(
        "import signal",
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)",
        f"print({SERVING!r}, file=sys.stderr, flush=True)",
        "time.sleep(600)",
    )
    started: list[ServerProcess] = []
    with pytest.raises(RuntimeError, match="measurement failed"):
        await failing_measurement(stubborn, tmp_path / "server.log", started)
    assert exited(started[0].pid)


async def test_a_server_that_exits_before_serving_is_reported(tmp_path: Path) -> None:
    failing = python_server("print('no tokens', file=sys.stderr)", "sys.exit(2)")
    with pytest.raises(AssertionError, match=r"did not log mcp\.serving; last logged:\nno tokens"):
        await failing_measurement(failing, tmp_path / "server.log", [])
