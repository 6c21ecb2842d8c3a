"""``retrieval serve`` as a child process, for what only a real process shows: signals, exit
codes, the time it takes to exit.

The server logs JSON lines to stderr; they are read as they come (a pipe nobody reads would
stall the server once full) and kept, so a test can wait for an event logged at any time.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

CLI = Path(sys.executable).with_name("retrieval")
START_S = 120.0
"""Loading the model and starting the embedded MongoDB take a while on a loaded machine."""
LAST_SHOWN = 5
"""Log entries a failed wait shows, the server's last ones."""


class ServerLog:
    """The JSON log lines of a server's stderr, in order, as they arrive."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self.entries: list[dict[str, Any]] = []
        self.other_lines: list[str] = []
        """What it wrote that is not a log entry: a crash's traceback, a fatal error."""
        self.ended = False
        self._grew = asyncio.Condition()
        self._reader = asyncio.create_task(self._read(stream))

    async def event(self, name: str) -> dict[str, Any]:
        """The first entry logging ``name``, once logged; ``AssertionError`` if the server
        ends its output without it."""
        async with self._grew:
            await self._grew.wait_for(lambda: self._find(name) is not None or self.ended)
        found = self._find(name)
        if found is None:
            shown = [json.dumps(entry) for entry in self.entries[-LAST_SHOWN:]]
            last = "\n".join([*shown, *self.other_lines[-LAST_SHOWN:]])
            raise AssertionError(f"the server exited before logging {name}; last logged:\n{last}")
        return found

    async def closed(self) -> None:
        """Return once the server has closed its output (it has exited)."""
        async with self._grew:
            await self._grew.wait_for(lambda: self.ended)

    def events(self, name: str) -> list[dict[str, Any]]:
        return [entry for entry in self.entries if entry.get("event") == name]

    async def close(self) -> None:
        self._reader.cancel()
        with suppress(asyncio.CancelledError):
            await self._reader

    def _find(self, name: str) -> dict[str, Any] | None:
        return next(iter(self.events(name)), None)

    async def _read(self, stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            if not line.startswith(b"{"):
                self.other_lines.append(line.decode(errors="replace").rstrip())
                continue
            async with self._grew:
                self.entries.append(json.loads(line))
                self._grew.notify_all()
        async with self._grew:
            self.ended = True
            self._grew.notify_all()


class ServedProcess:
    """A running ``retrieval serve``: its process, its log and the ports it logged."""

    def __init__(
        self, process: asyncio.subprocess.Process, log: ServerLog, serving: dict[str, Any]
    ) -> None:
        self.process = process
        self.log = log
        self.port: int = serving["port"]
        self.metrics_port: int | None = serving.get("metrics_port")

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"


def serve_environment(data_dir: Path, **variables: str) -> dict[str, str]:
    """This process's environment for a server on the embedded stack in ``data_dir``, on a
    free loopback port, logging JSON; ``variables`` add or override ``RETRIEVAL_`` ones."""
    environment = os.environ | {
        "RETRIEVAL_DATA_DIR": str(data_dir),
        "RETRIEVAL_LOG_FORMAT": "json",
        "RETRIEVAL_GRPC_HOST": "127.0.0.1",
        "RETRIEVAL_GRPC_PORT": "0",
    }
    environment.pop("RETRIEVAL_MONGODB_URI", None)
    return environment | variables


@asynccontextmanager
async def served_process(cwd: Path, environment: Mapping[str, str]) -> AsyncIterator[ServedProcess]:
    """``retrieval serve`` in ``cwd``, once it logs ``grpc.serving``; killed on the way out
    if it is still running."""
    process = await asyncio.create_subprocess_exec(
        str(CLI), "serve", cwd=cwd, env=dict(environment), stderr=asyncio.subprocess.PIPE
    )
    assert process.stderr is not None
    log = ServerLog(process.stderr)
    try:
        serving = await asyncio.wait_for(log.event("grpc.serving"), timeout=START_S)
        yield ServedProcess(process, log, serving)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        await log.close()
