"""The Pinecone stand-ins of a replica set (the dense index, which also embeds, and the sparse
index) in a child process of their own: the process can be stalled (SIGSTOP, then SIGCONT),
as an index that stops answering is, and the indexes' lag changed while it runs.

Run as ``python -m retrieval_testkit.standin_process DIMENSION LAG_S API_KEY``, it prints one
JSON line, ``{"dense": url, "sparse": url}``, then reads lines from its input, each a new lag
in seconds for both indexes, answering each with ``ok``; it exits when its input closes.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from retrieval_testkit.pinecone_standin import PineconeStandIn

START_S = 60.0


class StandInProcess:
    """The running child: its indexes' URLs, its lag, and the signals that stall it."""

    def __init__(
        self, process: asyncio.subprocess.Process, dense_url: str, sparse_url: str
    ) -> None:
        self.process = process
        self.dense_url = dense_url
        self.sparse_url = sparse_url

    async def set_lag(self, seconds: float) -> None:
        """Writes from now on are shown ``seconds`` after they are acknowledged."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write(f"{seconds}\n".encode())
        await self.process.stdin.drain()
        answer = await self.process.stdout.readline()
        if answer.strip() != b"ok":
            raise RuntimeError(f"the stand-ins did not take the lag: {answer!r}")

    def stall(self) -> None:
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.process.pid, signal.SIGCONT)


@asynccontextmanager
async def standin_process(
    dimension: int, lag_s: float, api_key: str
) -> AsyncIterator[StandInProcess]:
    """The stand-ins in a child process, lagging ``lag_s`` (more than 0, so that the lag can
    change), taking ``api_key``; resumed and ended on the way out."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        __name__,
        str(dimension),
        str(lag_s),
        api_key,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    assert process.stdin is not None
    try:
        urls = json.loads(await asyncio.wait_for(process.stdout.readline(), START_S))
        yield StandInProcess(process, urls["dense"], urls["sparse"])
    finally:
        if process.returncode is None:
            os.kill(process.pid, signal.SIGCONT)
            process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), START_S)
            except TimeoutError:
                process.kill()
                await process.wait()


def serve(dimension: int, lag_s: float, api_key: str) -> None:
    dense = PineconeStandIn(dimension=dimension, lag_seconds=lag_s, api_key=api_key)
    sparse = PineconeStandIn(vector_type="sparse", lag_seconds=lag_s, api_key=api_key)
    with dense, sparse:
        print(json.dumps({"dense": dense.url, "sparse": sparse.url}), flush=True)
        for line in sys.stdin:
            for standin in (dense, sparse):
                standin.set_lag(float(line))
            print("ok", flush=True)


if __name__ == "__main__":
    serve(int(sys.argv[1]), float(sys.argv[2]), sys.argv[3])
