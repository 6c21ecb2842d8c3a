"""The MongoDB-protocol server (SecantusDB's ``secantusd-py``) as a child process on one port
and data directory, which can be killed and started again there, as a restarted MongoDB is."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from retrieval.adapters.mongo.embedded_server import free_port, server_executable

START_S = 60.0


class MongoProcess:
    """The server on ``127.0.0.1`` with its data in ``storage``, between ``start`` and ``kill``."""

    def __init__(self, storage: Path) -> None:
        self.storage = storage
        self.port = free_port()
        self._process: asyncio.subprocess.Process | None = None

    @property
    def uri(self) -> str:
        return f"mongodb://127.0.0.1:{self.port}/?directConnection=true"

    async def start(self) -> None:
        """Start the server; return once it accepts connections."""
        self.storage.mkdir(parents=True, exist_ok=True)
        with (self.storage.parent / "mongo.log").open("ab") as log:
            self._process = await asyncio.create_subprocess_exec(
                server_executable(),
                "--host", "127.0.0.1",
                "--port", str(self.port),
                "--storage-path", str(self.storage),
                "--log-level", "WARNING",
                stdout=log,
                stderr=log,
            )  # fmt: skip
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            if self._process.returncode is not None:
                raise RuntimeError(f"the MongoDB server exited with {self._process.returncode}")
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", self.port)
            except OSError:
                await asyncio.sleep(0.05)
                continue
            writer.close()
            await writer.wait_closed()
            return
        raise RuntimeError(f"the MongoDB server did not listen within {START_S:.0f} s")

    async def kill(self) -> None:
        """SIGKILL the server; return once it is reaped."""
        if self._process is not None and self._process.returncode is None:
            self._process.kill()
            await self._process.wait()


@asynccontextmanager
async def mongo_process(storage: Path) -> AsyncIterator[MongoProcess]:
    """A started server, killed on the way out."""
    server = MongoProcess(storage)
    await server.start()
    try:
        yield server
    finally:
        await server.kill()
