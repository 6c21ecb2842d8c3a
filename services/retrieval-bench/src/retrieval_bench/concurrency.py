"""Throughput and event-loop lag of ``RetrievalService.retrieve`` with many callers in one
process, against the embedder-bound ceiling measured in the same run.

At each level, ``callers`` callers ask questions at once, each taking the next question no
one has asked, until ``calls`` are answered; every question is unique and the caches are off
(``retrieval_bench.thread_settings`` starts the process so), so every retrieval embeds
its query. The ceiling is the raw embedder (the model as the service drives it, without the
service) embedding the same questions with as many callers. The two alternate in ``ROUNDS``
rounds of a few seconds each, so that a change in the machine's speed falls on both: on a
shared machine the CPU time the same query costs drifts by several percent within a minute.

While the service answers, a probe on the same loop sleeps ``LAG_PERIOD_S`` over and over and
records how late it wakes: a loop that never runs CPU-bound work itself wakes on time,
however busy the worker threads are. The probe alone, before the levels, gives the lag of
the machine itself; the garbage collector's pauses, which stop the loop too, are timed apart.

CPU time per call is counted for the whole process, for the loop's thread alone, and for the
chunk store's server; once every core is busy, throughput goes as the inverse of the CPU a
call costs, so the ratio to the ceiling is about the raw embedder's CPU per call over the
service's and the store's together.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from retrieval.domain.models import DENSE, RetrievalResult
from retrieval.evaluation.percentiles import percentile, summary
from retrieval.ports import ChunkRepository, Embedder, VectorIndex
from retrieval.ports.embedder import Vector
from retrieval.service.retrieval.pipeline.graph_leads import GraphLeads
from retrieval.service.retrieval.retrieval_service import RetrievalService
from retrieval_bench.latency import questions

T = TypeVar("T")

LAG_PERIOD_S = 0.01
IDLE_PROBE_S = 2.0
ROUNDS = 6
WARM_UP_CALLS = 5
PASSAGES = 16
TOP_K = 10
RATIO_TARGET = 0.9


class LoopLagProbe:
    """While entered, sleeps ``period_s`` over and over on the running loop and records in
    ``lags_ms`` how late each wake-up is; ``loop_cpu_s`` is the CPU time the loop's thread
    spent meanwhile, ``gc_pauses_ms`` the garbage collections (which stop every thread)."""

    def __init__(self, period_s: float = LAG_PERIOD_S) -> None:
        self._period_s = period_s
        self._task: asyncio.Task[None] | None = None
        self._collecting_since = 0.0
        self.lags_ms: list[float] = []
        self.gc_pauses_ms: list[float] = []
        self.loop_cpu_s = 0.0

    async def __aenter__(self) -> LoopLagProbe:
        self._task = asyncio.get_running_loop().create_task(self._sleep_over_and_over())
        gc.callbacks.append(self._on_collection)
        self.loop_cpu_s = -time.thread_time()
        await asyncio.sleep(0)
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self._task is not None
        self.loop_cpu_s += time.thread_time()
        gc.callbacks.remove(self._on_collection)
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    def _on_collection(self, phase: str, _: dict) -> None:
        if phase == "start":
            self._collecting_since = time.perf_counter()
        else:
            self.gc_pauses_ms.append((time.perf_counter() - self._collecting_since) * 1e3)

    async def _sleep_over_and_over(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            asked = loop.time()
            await asyncio.sleep(self._period_s)
            self.lags_ms.append(max(0.0, (loop.time() - asked - self._period_s) * 1e3))


@dataclass
class Run(Generic[T]):
    """What the callers of one run got back, how long each call and the run took, and the
    CPU time this process (every thread) spent meanwhile."""

    results: list[T] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)
    seconds: float = 0.0
    cpu_s: float = 0.0

    def __add__(self, other: Run[T]) -> Run[T]:
        return Run(
            self.results + other.results,
            self.latencies_ms + other.latencies_ms,
            self.seconds + other.seconds,
            self.cpu_s + other.cpu_s,
        )

    @property
    def per_s(self) -> float:
        return len(self.results) / self.seconds if self.seconds else 0.0

    def per_call_ms(self, seconds: float) -> float:
        return seconds * 1e3 / len(self.results) if self.results else 0.0


async def drive(call: Callable[[str], Awaitable[T]], asked: Sequence[str], callers: int) -> Run[T]:
    """``callers`` callers at once, each calling with the next question no one has taken,
    until every one of ``asked`` is answered."""
    pending = iter(asked)
    run: Run[T] = Run()

    async def caller() -> None:
        for question in pending:
            started = time.perf_counter()
            run.results.append(await call(question))
            run.latencies_ms.append((time.perf_counter() - started) * 1e3)

    started, cpu = time.perf_counter(), time.process_time()
    async with asyncio.TaskGroup() as group:
        for _ in range(min(callers, len(asked))):
            group.create_task(caller())
    run.seconds = time.perf_counter() - started
    run.cpu_s = time.process_time() - cpu
    return run


def cpu_seconds(pid: int) -> float:
    """User and system CPU time process ``pid`` has used so far, all its threads (Linux:
    ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def unique_questions(count: int, tag: str) -> list[str]:
    """``count`` questions, none asked before in this run (``tag`` tells runs apart)."""
    return [f"{question} ({tag}.{n})" for n, question in enumerate(questions(count, seed=7))]


def calls_at(callers: int, calls: int) -> int:
    """Calls measured with ``callers`` callers: ``calls``, and at least three per caller."""
    return max(calls, 3 * callers)


def ratio(throughput: float, ceiling: float) -> float:
    return throughput / ceiling if ceiling else 0.0


def search_ms(results: Sequence[RetrievalResult]) -> list[float]:
    """Each retrieval's vector search, as its timings report it."""
    return [r.timings.stages[DENSE] for r in results if DENSE in r.timings.stages]


def level_figures(
    ceiling: Run, service: Run[RetrievalResult], probes: Sequence[LoopLagProbe], store_cpu_s: float
) -> dict:
    throughput = service.per_s
    lags_ms = [lag for probe in probes for lag in probe.lags_ms]
    loop_cpu_s = sum(probe.loop_cpu_s for probe in probes)
    return {
        "calls": len(service.results),
        "throughput_per_s": throughput,
        "ceiling_per_s": ceiling.per_s,
        "ratio": ratio(throughput, ceiling.per_s),
        "p50_ms": percentile(service.latencies_ms, 50),
        "p95_ms": percentile(service.latencies_ms, 95),
        "search_p50_ms": percentile(search_ms(service.results), 50),
        "loop_lag_p50_ms": percentile(lags_ms, 50),
        "loop_lag_p95_ms": percentile(lags_ms, 95),
        "loop_lag_max_ms": max(lags_ms, default=0.0),
        "gc_pause_max_ms": max((p for probe in probes for p in probe.gc_pauses_ms), default=0.0),
        "loop_cpu_ms_per_call": service.per_call_ms(loop_cpu_s),
        "cpu_ms_per_call": service.per_call_ms(service.cpu_s),
        "store_cpu_ms_per_call": service.per_call_ms(store_cpu_s),
        "ceiling_cpu_ms_per_call": ceiling.per_call_ms(ceiling.cpu_s),
    }


@dataclass(frozen=True)
class Target:
    """What the callers call: the service, the raw embedder under it, the vector index."""

    retrieval: RetrievalService
    raw: Embedder
    index: VectorIndex
    namespace: str
    depth: int
    """Candidates the service's vector search asks for (``SearchPlan.depth``)."""
    passages: tuple[str, ...]
    """Texts to embed as ingestion does, for the model's passage throughput."""
    store_cpu_s: Callable[[], float]
    """CPU seconds the chunk store's server has used so far (0 when it runs elsewhere)."""
    chunk_reads: Callable[[], tuple[float, float]]
    """Chunk texts the chunk text cache has served so far, and those it read from the store."""
    chunks: ChunkRepository
    """The service's chunk store (its chunk text cache over the store)."""
    leads: GraphLeads
    """What the second hop reads of the knowledge graph, and keeps."""

    async def retrieve(self, question: str) -> RetrievalResult:
        return await self.retrieval.retrieve(question, (), TOP_K, 0.0, self.namespace)


async def measure_levels(target: Target, levels: Sequence[int], calls: int) -> dict:
    """The figures of every level (by number of callers), and the machine's own lag."""
    async with LoopLagProbe() as idle:
        await asyncio.sleep(IDLE_PROBE_S)
    figures: dict = {"idle_loop_lag_ms": summary(idle.lags_ms), "levels": {}}
    for callers in levels:
        ceiling: Run = Run()
        service: Run[RetrievalResult] = Run()
        probes = []
        store_cpu_s = 0.0
        hits_before, misses_before = target.chunk_reads()
        share = -(-calls_at(callers, calls) // ROUNDS)
        for round_ in range(ROUNDS):
            asked = unique_questions(share, f"{callers}.{round_}")
            ceiling += await drive(target.raw.embed_query, asked, callers)
            store_cpu_s -= target.store_cpu_s()
            async with LoopLagProbe() as probe:
                service += await drive(target.retrieve, asked, callers)
            store_cpu_s += target.store_cpu_s()
            probes.append(probe)
        hits, misses = target.chunk_reads()
        hits, misses = hits - hits_before, misses - misses_before
        figures["levels"][str(callers)] = level_figures(ceiling, service, probes, store_cpu_s) | {
            "chunk_cache_hit_share": ratio(hits, hits + misses)
        }
    return figures


async def measure_threads(target: Target, calls: int, busy_callers: int, busy_calls: int) -> dict:
    """What a thread setting changes. The vector search of one caller's retrievals, against
    the index searched right after the model embeds each question, without the service, and
    alone (the same vectors again, one search after another); the service's throughput and
    loop lag with ``busy_callers`` callers; the model's passage throughput (ingestion)."""
    started = time.perf_counter()
    await target.raw.embed_passages(target.passages)
    passages_per_s = len(target.passages) / (time.perf_counter() - started)
    vectors = []
    after_embed_ms = []
    for question in unique_questions(calls, "alone"):
        vectors.append(await target.raw.embed_query(question))
        after_embed_ms.append(await timed_search(target, vectors[-1]))
    alone_ms = [await timed_search(target, vector) for vector in vectors]
    one = await drive(target.retrieve, unique_questions(calls, "one"), 1)
    async with LoopLagProbe() as probe:
        busy = await drive(target.retrieve, unique_questions(busy_calls, "busy"), busy_callers)
    return {
        "search_in_service_p50_ms": percentile(search_ms(one.results), 50),
        "search_in_service_p95_ms": percentile(search_ms(one.results), 95),
        "search_after_embed_p50_ms": percentile(after_embed_ms, 50),
        "search_alone_p50_ms": percentile(alone_ms, 50),
        "search_alone_p95_ms": percentile(alone_ms, 95),
        "embed_p50_ms": percentile([r.timings.embed_ms for r in one.results], 50),
        "retrieve_p50_ms": percentile(one.latencies_ms, 50),
        "busy_callers": busy_callers,
        "busy_throughput_per_s": busy.per_s,
        "busy_p95_ms": percentile(busy.latencies_ms, 95),
        "busy_loop_lag_p95_ms": percentile(probe.lags_ms, 95),
        "busy_loop_lag_max_ms": max(probe.lags_ms, default=0.0),
        "busy_loop_cpu_ms_per_call": busy.per_call_ms(probe.loop_cpu_s),
        "passages_per_s": passages_per_s,
    }


async def timed_search(target: Target, vector: Vector) -> float:
    """Milliseconds of one search of the index, as deep as the service's."""
    started = time.perf_counter()
    await target.index.query(vector, top_k=target.depth, namespace=target.namespace)
    return (time.perf_counter() - started) * 1e3


async def warm_up(target: Target) -> None:
    """The model loaded, the keyword index's model built, connections open, and every chunk
    of the namespace read once through the chunk text cache and its graph record through the
    second hop's, which hold them all: the steady state of a replica that has answered for a
    while. A cold cache costs the first calls a read of the store each, which is no part of
    the service's cost per call."""
    await drive(target.retrieve, unique_questions(WARM_UP_CALLS, "warm-up"), 1)
    # the records are kept under the namespace generation read last
    await target.leads.generations.current(target.namespace)
    async for page in target.chunks.list_chunks(target.namespace):
        ids = [chunk_id for chunk_id, _ in page]
        await target.chunks.get_many(ids, target.namespace)
        await target.leads.records(ids, target.namespace)
