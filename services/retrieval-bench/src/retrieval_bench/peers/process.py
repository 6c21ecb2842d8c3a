"""A peer library answering queries from a process of its own, one query at a time.

The process (``retrieval_bench/peers/runner.py`` in the peers' environment) builds its
indexes, writes one JSON line ``{"library", "index_s"}``, then answers each line
``{"query": text}`` with ``{"ranking", "latency_ms"}`` until its input closes. It times each
search itself, so the pipe's round trip is no part of the latency.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

STOP_TIMEOUT_S = 30.0


class PeerStoppedError(RuntimeError):
    """A peer's process ended or answered out of protocol."""


class PeerProcess:
    def __init__(self, name: str, process: asyncio.subprocess.Process) -> None:
        self.name = name
        self._process = process
        self.library = ""
        self.index_s = 0.0

    @classmethod
    async def start(cls, name: str, command: Sequence[str]) -> PeerProcess:
        """Start ``command``; ``ready`` then waits until its indexes are built."""
        process = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        return cls(name, process)

    async def ready(self) -> None:
        announced = await self._read()
        self.library, self.index_s = str(announced["library"]), float(announced["index_s"])

    async def ask(self, query: str) -> tuple[list[str], float]:
        """The peer's ranking for ``query`` and the milliseconds its search took."""
        assert self._process.stdin is not None
        self._process.stdin.write((json.dumps({"query": query}) + "\n").encode())
        await self._process.stdin.drain()
        reply = await self._read()
        return [str(doc) for doc in reply["ranking"]], float(reply["latency_ms"])

    async def _read(self) -> dict[str, Any]:
        assert self._process.stdout is not None
        line = await self._process.stdout.readline()
        if not line:
            code = await self._process.wait()
            raise PeerStoppedError(f"the {self.name} process ended (exit code {code})")
        try:
            return json.loads(line)
        except json.JSONDecodeError as error:
            raise PeerStoppedError(f"the {self.name} process wrote {line[:200]!r}") from error

    async def stop(self) -> None:
        """Close its input, and kill it if it has not ended within ``STOP_TIMEOUT_S``."""
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            await asyncio.wait_for(self._process.wait(), STOP_TIMEOUT_S)
        except TimeoutError:
            self._process.kill()
            await self._process.wait()


@asynccontextmanager
async def serving(commands: Mapping[str, Sequence[str]]) -> AsyncIterator[dict[str, PeerProcess]]:
    """Each command's process, started one after another (so their index builds do not share
    the machine) and ready; every one is stopped on the way out."""
    async with AsyncExitStack() as stack:
        peers = {}
        for name, command in commands.items():
            peer = await PeerProcess.start(name, command)
            stack.push_async_callback(peer.stop)
            await peer.ready()
            peers[name] = peer
        yield peers
