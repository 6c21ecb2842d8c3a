"""What MCP adds to ``retrieve()`` for an agent: the same queries in-process, as the ``search``
tool of a ``retrieval mcp --http`` server in a process of its own over streamable HTTP, and as
the ``search`` tool of a ``retrieval mcp`` child over stdio, one run; then calls from
concurrent MCP sessions to the HTTP server, counting the ones that fail.

The demo knowledge base is ingested into the run's data directory, then copied: this process
keeps the original open and each server, started as a user starts it (over HTTP on a free
port, with a token from a tokens file), the copy, since one process holds a data directory at
a time. Each question is asked in-process and of the server in turn (alternating which goes
first), so that a load on the machine that drifts over the run weighs on both sides of the
difference alike; each path must find the same chunks, the guard that both read the same
data. No path caches results or query vectors, so none answers from what another computed.

Processor time a call: the client's, of this thread, per call; the HTTP server's, all its
threads over the measured calls, against this process's over the in-process ones.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from retrieval.adapters.files.document_files import load_documents
from retrieval.demo import KNOWLEDGE_DIR
from retrieval.domain.tenants import token_digest
from retrieval.evaluation.percentiles import percentile
from retrieval.lifecycle import running
from retrieval.settings import Settings
from retrieval_bench.concurrency import cpu_seconds
from retrieval_bench.latency import UNCACHED, questions
from retrieval_testkit.served_process import CLI, LAST_SHOWN, START_S

Progress = Callable[[], None]
Found = tuple[str, ...]
"""The chunk ids a search returned, best first."""
Search = Callable[[str], Awaitable[Found]]
STOP_S = 30.0
"""How long a server has to exit after SIGTERM before it is killed."""
SERVING_POLL_S = 0.1


@dataclass
class Timed:
    """One path's measured calls, in the order asked."""

    clock_ms: list[float] = field(default_factory=list)
    thread_cpu_ms: list[float] = field(default_factory=list)
    """This thread's processor time, each call."""
    own_cpu_ms: float = 0.0
    """This process's processor time over the calls, all its threads."""
    server_cpu_ms: float = 0.0
    """The server process's processor time over the measured calls (0 when not read)."""
    found: list[Found] = field(default_factory=list)

    async def call(self, search: Search, question: str) -> None:
        started, thread, process = time.perf_counter(), time.thread_time(), time.process_time()
        self.found.append(await search(question))
        self.clock_ms.append((time.perf_counter() - started) * 1e3)
        self.thread_cpu_ms.append((time.thread_time() - thread) * 1e3)
        self.own_cpu_ms += (time.process_time() - process) * 1e3

    def per_call_ms(self, total_ms: float) -> float:
        return total_ms / len(self.clock_ms)


async def paired_calls(
    local: Search, remote: Search, asked: Sequence[str], warmup: int, server: int | None,
    on_query: Progress,
) -> tuple[Timed, Timed]:  # fmt: skip
    """Each question asked of ``local`` and of ``remote`` in turn, which goes first
    alternating, the first ``warmup`` unmeasured; ``server``: the process answering
    ``remote``, when known."""
    for question in asked[:warmup]:
        await local(question)
        await remote(question)
    near, far = Timed(), Timed()
    processor = 0.0 if server is None else cpu_seconds(server)
    for n, question in enumerate(asked[warmup:]):
        paths = [(near, local), (far, remote)]
        for timed, search in paths[:: -1 if n % 2 else 1]:
            await timed.call(search, question)
        on_query()
    if server is not None:
        far.server_cpu_ms = (cpu_seconds(server) - processor) * 1e3
    return near, far


def same_chunks(path: str, expected: Timed, timed: Timed, asked: Sequence[str]) -> None:
    """``RuntimeError`` naming the first question ``path`` answered with other chunks."""
    for question, wanted, found in zip(asked, expected.found, timed.found, strict=True):
        if wanted != found:
            raise RuntimeError(
                f"{path} found {list(found)} for {question!r}, retrieve() {list(wanted)}: "
                "not the same data"
            )


@asynccontextmanager
async def http_session(url: str, token: str) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


async def searched(client: Client, question: str, top_k: int) -> Found:
    result = await client.call_tool("search", {"query": question, "top_k": top_k})
    if result.is_error or result.structured_content is None:
        raise RuntimeError(result.content[0].text if result.content else "search failed")
    return tuple(match["chunk_id"] for match in result.structured_content["matches"])


async def failed_calls(url: str, token: str, calls: int, sessions: int, top_k: int) -> int:
    """Calls of ``search`` that failed among ``calls`` spread over ``sessions`` at once."""

    async def one_session(asked: list[str]) -> int:
        failures = 0
        async with http_session(url, token) as client:
            for question in asked:
                try:
                    await searched(client, question, top_k)
                except Exception:  # every failure counts, whatever its kind
                    failures += 1
        return failures

    asked = questions(calls, seed=23)
    shares = [asked[n::sessions] for n in range(sessions)]
    counted = await asyncio.gather(*(one_session(share) for share in shares))
    return sum(counted)


@dataclass
class ServerProcess:
    """A running MCP server: its process id and the port it logged."""

    pid: int
    port: int


async def serving_entry(log: Path, process: asyncio.subprocess.Process) -> dict[str, Any]:
    """The ``mcp.serving`` entry of the server's JSON log ``log``, once written;
    ``AssertionError`` with its last lines if the server exits first or ``START_S`` passes."""
    deadline = time.monotonic() + START_S
    while True:
        text = await asyncio.to_thread(log.read_text)
        for line in text[: text.rfind("\n") + 1].splitlines():
            entry = json.loads(line) if line.startswith("{") else {}
            if entry.get("event") == "mcp.serving":
                return entry
        if process.returncode is not None or time.monotonic() > deadline:
            last = "\n".join(text.splitlines()[-LAST_SHOWN:])
            raise AssertionError(f"the server did not log mcp.serving; last logged:\n{last}")
        await asyncio.sleep(SERVING_POLL_S)


@asynccontextmanager
async def served_mcp(
    command: Sequence[str], environment: Mapping[str, str], log: Path
) -> AsyncIterator[ServerProcess]:
    """``command`` (an MCP server logging JSON to stderr, into ``log``) once it logs
    ``mcp.serving``; stopped on the way out, however the block ends: SIGTERM, then SIGKILL
    after ``STOP_S``. A file, not a pipe: this process reads nothing while it measures."""
    with log.open("wb") as stderr:
        process = await asyncio.create_subprocess_exec(
            *command, env=dict(environment), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL, stderr=stderr,
        )  # fmt: skip
    try:
        serving = await serving_entry(log, process)
        yield ServerProcess(process.pid, serving["port"])
    finally:
        if process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), timeout=STOP_S)
            except TimeoutError:
                process.kill()
                await process.wait()


def server_environment(data_dir: Path, **variables: str) -> dict[str, str]:
    """This process's environment for a server over ``data_dir`` that caches nothing;
    ``variables`` add ``RETRIEVAL_`` ones."""
    uncached = {f"RETRIEVAL_{name.upper()}": str(value) for name, value in UNCACHED.items()}
    return os.environ | uncached | {"RETRIEVAL_DATA_DIR": str(data_dir)} | variables


def tokens_file(directory: Path, token: str) -> Path:
    """A tenants file in ``directory`` granting ``token`` reads in every namespace."""
    entry = {"name": "bench", "sha256": token_digest(token), "namespaces": ["*"]}
    path = directory / "tokens.json"
    path.write_text(json.dumps([entry | {"scopes": ["read"]}]))
    return path


async def ingested(settings: Settings) -> int:
    """The demo knowledge base ingested into ``settings.data_dir``; its chunks."""
    async with running(settings) as app:
        outcomes = await app.ingestion.ingest(load_documents([KNOWLEDGE_DIR]), None)
    return sum(outcome.chunks for outcome in outcomes)


async def over_http(
    data_dir: Path, local: Search, asked: Sequence[str], warmup: int, top_k: int, calls: int,
    sessions: int, on_query: Progress,
) -> tuple[Timed, Timed, int]:  # fmt: skip
    """``local`` and ``search`` of ``retrieval mcp --http`` over ``data_dir`` timed in
    turn, and the failed calls of ``sessions`` concurrent sessions."""
    token = secrets.token_urlsafe(24)
    with tempfile.TemporaryDirectory(prefix="bench-mcp-server-") as server_dir:
        tokens = tokens_file(Path(server_dir), token)
        environment = server_environment(
            data_dir,
            RETRIEVAL_GRPC_TOKENS_FILE=str(tokens),
            RETRIEVAL_LOG_FORMAT="json",
            RETRIEVAL_LOG_LEVEL="INFO",
        )
        command = [str(CLI), "mcp", "--http", "--host", "127.0.0.1", "--port", "0"]
        async with served_mcp(command, environment, Path(server_dir) / "server.log") as server:
            url = f"http://127.0.0.1:{server.port}/mcp"
            async with http_session(url, token) as client:
                near, far = await paired_calls(
                    local, lambda q: searched(client, q, top_k), asked, warmup, server.pid,
                    on_query,
                )  # fmt: skip
            errors = await failed_calls(url, token, calls, sessions, top_k)
    return near, far, errors


async def over_stdio(
    data_dir: Path, local: Search, asked: Sequence[str], warmup: int, top_k: int,
    on_query: Progress,
) -> tuple[Timed, Timed]:  # fmt: skip
    """``local`` and ``search`` of ``retrieval mcp`` over ``data_dir``, the child the client
    starts, timed in turn; the child's processor time is not read (the SDK does not name
    it)."""
    server = StdioServerParameters(command=str(CLI), args=["mcp"], env=server_environment(data_dir))
    async with Client(server) as client:
        return await paired_calls(
            local, lambda q: searched(client, q, top_k), asked, warmup, None, on_query
        )


async def measure(
    settings: Settings,
    *,
    queries: int,
    calls: int,
    sessions: int,
    top_k: int = 5,
    warmup: int = 10,
    on_query: Progress = lambda: None,
) -> dict[str, float | int]:
    """The figures of reports/mcp.json; ``settings.data_dir`` is the run's own directory.
    ``on_query`` is called after each measured question of each server, ``2 * queries``
    times."""
    asked = questions(warmup + queries, seed=11)
    measured = asked[warmup:]
    settings = settings.model_copy(update=UNCACHED)
    chunks = await ingested(settings)
    with tempfile.TemporaryDirectory(prefix="bench-mcp-copy-") as copy_root:
        served = Path(copy_root) / "data"
        await asyncio.to_thread(shutil.copytree, settings.data_dir, served)
        async with running(settings) as app:

            async def retrieved(question: str) -> Found:
                result = await app.retrieval.retrieve(question, top_k=top_k)
                return tuple(match.chunk_id for match in result.matches)

            local, http, errors = await over_http(
                served, retrieved, asked, warmup, top_k, calls, sessions, on_query
            )
            local_stdio, stdio = await over_stdio(served, retrieved, asked, warmup, top_k, on_query)
    same_chunks("MCP over HTTP", local, http, measured)
    same_chunks("MCP over stdio", local_stdio, stdio, measured)
    inproc_cpu = local.per_call_ms(local.own_cpu_ms)
    http_server_cpu = http.per_call_ms(http.server_cpu_ms)
    return {
        "chunks": chunks,
        "queries": queries,
        "top_k": top_k,
        "inproc_p50_ms": percentile(local.clock_ms, 50),
        "http_p50_ms": percentile(http.clock_ms, 50),
        "stdio_p50_ms": percentile(stdio.clock_ms, 50),
        "search_overhead_p50_ms": percentile(http.clock_ms, 50) - percentile(local.clock_ms, 50),
        "stdio_overhead_p50_ms": (
            percentile(stdio.clock_ms, 50) - percentile(local_stdio.clock_ms, 50)
        ),
        "http_client_cpu_p50_ms": percentile(http.thread_cpu_ms, 50),
        "inproc_cpu_per_call_ms": inproc_cpu,
        "http_server_cpu_per_call_ms": http_server_cpu,
        "server_overhead_cpu_per_call_ms": http_server_cpu - inproc_cpu,
        "concurrent_calls": calls,
        "concurrent_sessions": sessions,
        "errors": errors,
    }
