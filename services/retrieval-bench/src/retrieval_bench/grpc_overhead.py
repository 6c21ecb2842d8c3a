"""What gRPC adds to ``retrieve()``: the same queries in-process and over loopback, one run.

The demo knowledge base is ingested into a namespace of its own, served by a server in this
process on 127.0.0.1, and both paths answer each question in turn (alternating which goes
first). Both must return the same chunk ids and scores; any difference is counted. The
application caches neither results nor query vectors (``UNCACHED``): with them, the path asked
second would answer from what the first left, and each path's percentiles would mix cached
and computed calls. Answers that came from a cache anyway are counted.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from retrieval.adapters.files.document_files import load_documents
from retrieval.demo import KNOWLEDGE_DIR
from retrieval.domain.models import RetrievalResult
from retrieval.evaluation.percentiles import percentile
from retrieval.grpc.client import RetrievalClient
from retrieval.grpc.server import create_server
from retrieval.grpc.settings import GrpcSettings
from retrieval.lifecycle import Application
from retrieval_bench.latency import questions
from retrieval_testkit.plaintext_loopback import PLAINTEXT_LOOPBACK


@dataclass
class Samples:
    local_ms: list[float] = field(default_factory=list)
    remote_ms: list[float] = field(default_factory=list)
    server_ms: list[float] = field(default_factory=list)
    mismatches: int = 0
    cached: int = 0

    def add(
        self, local: tuple[float, RetrievalResult], remote: tuple[float, RetrievalResult]
    ) -> None:
        self.local_ms.append(local[0])
        self.remote_ms.append(remote[0])
        self.server_ms.append(remote[1].timings.total_ms)
        self.mismatches += ranking(local[1]) != ranking(remote[1])
        self.cached += local[1].cached + remote[1].cached


def ranking(result: RetrievalResult) -> list[tuple[str, float]]:
    return [(match.chunk_id, match.score) for match in result.matches]


async def timed(call: Awaitable[RetrievalResult]) -> tuple[float, RetrievalResult]:
    started = time.perf_counter()
    result = await call
    return (time.perf_counter() - started) * 1e3, result


async def compare(
    app: Application,
    client: RetrievalClient,
    asked: list[str],
    samples: Samples,
    *,
    namespace: str,
    top_k: int,
    warmup: int,
    on_query: Callable[[], None] | None,
) -> None:
    for n, question in enumerate(asked):
        calls = {
            "local": app.retrieval.retrieve(question, (), top_k, 0.0, namespace),
            "remote": client.retrieve(question, namespace=namespace, top_k=top_k),
        }
        results = {path: await timed(calls[path]) for path in sorted(calls, reverse=bool(n % 2))}
        if n >= warmup:
            samples.add(results["local"], results["remote"])
            if on_query is not None:
                on_query()


async def measure(
    app: Application,
    *,
    queries: int = 300,
    top_k: int = 5,
    warmup: int = 20,
    seed: int = 11,
    on_query: Callable[[], None] | None = None,
) -> dict:
    namespace = f"bench-grpc-{uuid.uuid4().hex[:8]}"
    settings = GrpcSettings(**PLAINTEXT_LOOPBACK)
    samples = Samples()
    try:
        outcomes = await app.ingestion.ingest(load_documents([KNOWLEDGE_DIR]), namespace)
        server, port = await create_server(app, "127.0.0.1:0", settings)
        try:
            async with RetrievalClient.connect(
                f"127.0.0.1:{port}", max_message_bytes=settings.max_message_bytes
            ) as client:
                asked = questions(warmup + queries, seed)
                await compare(
                    app, client, asked, samples,
                    namespace=namespace, top_k=top_k, warmup=warmup, on_query=on_query,
                )  # fmt: skip
        finally:
            await server.stop(None)
    finally:
        await app.library.delete_namespace(namespace)
    return figures(samples) | {
        "queries": len(samples.local_ms),
        "top_k": top_k,
        "chunks": sum(outcome.chunks for outcome in outcomes),
        "mismatches": samples.mismatches,
        "cached_answers": samples.cached,
    }


def figures(samples: Samples) -> dict:
    local_ms, remote_ms, server_ms = samples.local_ms, samples.remote_ms, samples.server_ms
    paired = [remote - local for local, remote in zip(local_ms, remote_ms, strict=True)]
    wire = [remote - server for remote, server in zip(remote_ms, server_ms, strict=True)]
    inproc_p50, inproc_p95 = percentile(local_ms, 50), percentile(local_ms, 95)
    grpc_p50, grpc_p95 = percentile(remote_ms, 50), percentile(remote_ms, 95)
    return {
        "inproc_p50_ms": inproc_p50,
        "inproc_p95_ms": inproc_p95,
        "grpc_p50_ms": grpc_p50,
        "grpc_p95_ms": grpc_p95,
        "overhead_p50_ms": grpc_p50 - inproc_p50,
        "overhead_p95_ms": grpc_p95 - inproc_p95,
        "paired_overhead_p50_ms": percentile(paired, 50),
        "wire_overhead_p50_ms": percentile(wire, 50),
        "wire_overhead_p95_ms": percentile(wire, 95),
    }
