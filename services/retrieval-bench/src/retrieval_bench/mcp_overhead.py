"""What MCP adds to ``retrieve()``: the same queries in-process, as the ``search`` tool over
streamable HTTP, and as the ``search`` tool of ``retrieval mcp`` over stdio, one run; then
calls from concurrent MCP sessions, counting the ones that fail.

In-process and over HTTP each call is timed twice: by the clock, and by the processor time of
the event loop's thread, which runs the HTTP client and the server both (the embedder's own
threads are left out): a busy machine disturbs it less than the clock.

The demo knowledge base is ingested into a data directory of the run's own. The in-process
and HTTP paths answer each question in turn (alternating which goes first) from one running
application; the stdio server is a child process over the same directory, started once the
application has stopped, so its own ``retrieve()`` is what the in-process figure measured.
No path caches results or query vectors, so none answers from what another computed.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from retrieval.adapters.files.document_files import load_documents
from retrieval.demo import KNOWLEDGE_DIR
from retrieval.domain.tenants import Tenants, admin_grant
from retrieval.evaluation.percentiles import percentile
from retrieval.lifecycle import running
from retrieval.mcp.transports import http_served
from retrieval.settings import Settings
from retrieval_bench.latency import questions
from retrieval_testkit.served_process import CLI

Progress = Callable[[], None]
UNCACHED = {"result_cache_entries": 0, "query_vector_cache_entries": 0}
"""Every path computes every query: no result or query vector an earlier path left."""


async def timed_ms(call: Awaitable[Any]) -> tuple[float, float]:
    """The milliseconds ``call`` took by the clock, and of this thread's processor time."""
    started, processor = time.perf_counter(), time.thread_time()
    await call
    return (time.perf_counter() - started) * 1e3, (time.thread_time() - processor) * 1e3


def search_arguments(question: str, top_k: int) -> dict[str, Any]:
    return {"query": question, "top_k": top_k}


@asynccontextmanager
async def http_session(url: str, token: str) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


async def searched(client: Client, question: str, top_k: int) -> None:
    result = await client.call_tool("search", search_arguments(question, top_k))
    if result.is_error:
        raise RuntimeError(result.content[0].text if result.content else "search failed")


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


async def in_process_and_http(
    settings: Settings, asked: list[str], warmup: int, top_k: int, calls: int, sessions: int,
    on_query: Progress,
) -> dict[str, Any]:  # fmt: skip
    token = secrets.token_urlsafe(24)
    tenants = Tenants([admin_grant("bench", token)], "bench")
    local_ms: list[float] = []
    remote_ms: list[float] = []
    local_cpu_ms: list[float] = []
    remote_cpu_ms: list[float] = []
    async with running(settings) as app:
        outcomes = await app.ingestion.ingest(load_documents([KNOWLEDGE_DIR]), None)
        async with http_served(app, tenants, "127.0.0.1", 0) as port:
            url = f"http://127.0.0.1:{port}/mcp"
            async with http_session(url, token) as client:
                for n, question in enumerate(asked):
                    paths = {
                        "local": lambda q=question: app.retrieval.retrieve(q, top_k=top_k),
                        "mcp": lambda q=question: searched(client, q, top_k),
                    }
                    times = {
                        path: await timed_ms(paths[path]())
                        for path in sorted(paths, reverse=bool(n % 2))
                    }
                    if n >= warmup:
                        local_ms.append(times["local"][0])
                        remote_ms.append(times["mcp"][0])
                        local_cpu_ms.append(times["local"][1])
                        remote_cpu_ms.append(times["mcp"][1])
                        on_query()
            errors = await failed_calls(url, token, calls, sessions, top_k)
    return {
        "chunks": sum(outcome.chunks for outcome in outcomes),
        "inproc_p50_ms": percentile(local_ms, 50),
        "http_p50_ms": percentile(remote_ms, 50),
        "search_overhead_p50_ms": percentile(remote_ms, 50) - percentile(local_ms, 50),
        "inproc_cpu_p50_ms": percentile(local_cpu_ms, 50),
        "http_cpu_p50_ms": percentile(remote_cpu_ms, 50),
        "search_overhead_cpu_p50_ms": percentile(remote_cpu_ms, 50) - percentile(local_cpu_ms, 50),
        "concurrent_calls": calls,
        "concurrent_sessions": sessions,
        "errors": errors,
    }


async def over_stdio(data_dir: Path, asked: list[str], warmup: int, top_k: int) -> list[float]:
    uncached = {f"RETRIEVAL_{name.upper()}": str(value) for name, value in UNCACHED.items()}
    environment = os.environ | uncached | {"RETRIEVAL_DATA_DIR": str(data_dir)}
    server = StdioServerParameters(command=str(CLI), args=["mcp"], env=environment)
    timings: list[float] = []
    async with Client(server) as client:
        for n, question in enumerate(asked):
            took, _ = await timed_ms(searched(client, question, top_k))
            if n >= warmup:
                timings.append(took)
    return timings


async def measure(
    settings: Settings,
    *,
    queries: int,
    calls: int,
    sessions: int,
    top_k: int = 5,
    warmup: int = 10,
    on_query: Progress = lambda: None,
) -> dict[str, Any]:
    """The figures of reports/mcp.json; ``settings.data_dir`` is the run's own directory."""
    asked = questions(warmup + queries, seed=11)
    settings = settings.model_copy(update=UNCACHED)
    figures = await in_process_and_http(settings, asked, warmup, top_k, calls, sessions, on_query)
    stdio_ms = await over_stdio(settings.data_dir, asked, warmup, top_k)
    return figures | {
        "queries": queries,
        "top_k": top_k,
        "stdio_p50_ms": percentile(stdio_ms, 50),
        "stdio_overhead_p50_ms": percentile(stdio_ms, 50) - figures["inproc_p50_ms"],
    }
