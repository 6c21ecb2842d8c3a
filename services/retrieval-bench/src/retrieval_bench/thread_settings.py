"""Each candidate thread setting in a process of its own, since OpenMP reads its settings
once, when the model loads.

The harness runs one embedded MongoDB server and one data directory for the indexes; the
processes run one after the other on both. The first seeds the namespace
(``seed_namespace``); the second, started over it as a service starts, measures the levels
(``measure_levels``) with the service's own
settings; the others find the namespace on disk and each answers ``measure_threads`` with
one candidate's settings. The result and query vector caches are off in every process, so
every call embeds its query; the chunk text cache keeps the service's setting.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path

from prometheus_client import Counter
from pydantic import SecretStr

from retrieval.adapters.files.document_files import load_documents
from retrieval.adapters.mongo.embedded_supervisor import EmbeddedMongoSupervisor
from retrieval.container import Container
from retrieval.demo import KNOWLEDGE_DIR
from retrieval.lifecycle import resolve, running
from retrieval.logging import configure_logging
from retrieval_bench.concurrency import (
    PASSAGES,
    TOP_K,
    Target,
    cpu_seconds,
    measure_levels,
    measure_threads,
    warm_up,
)
from retrieval_bench.latency import seed_namespace
from retrieval_bench.load import embedded_settings

NAMESPACE = "bench-concurrency"
SERVICE_SETTING = "service default"
PROCESS_TIMEOUT_S = 900.0
PASSAGE_SHARE = 0.8
MARGIN = 1.1
RUNTIME_VARIABLES = ("OMP_", "GOMP_", "OPENBLAS_")


def candidates(cores: int) -> dict[str, dict[str, str]]:
    """The settings each candidate's process starts with: the service's own first, then one
    change at a time (``embed_query_queue=0``: as before the model had a queue of its own),
    then the settings the service had before ``embed_blas_threads`` and ``embed_wait_policy``
    existed (all cores, the OpenMP runtime's own policy)."""
    every_core = {"RETRIEVAL_EMBED_BLAS_THREADS": str(cores)}
    runtime = {"RETRIEVAL_EMBED_WAIT_POLICY": "runtime"}
    return {
        SERVICE_SETTING: {},
        f"embed_blas_threads={cores}": every_core,
        "embed_wait_policy=runtime": runtime,
        "embed_wait_policy=active": {"RETRIEVAL_EMBED_WAIT_POLICY": "active"},
        "embed_threads=1": {"RETRIEVAL_EMBED_THREADS": "1"},
        "chunk_cache_entries=0": {"RETRIEVAL_CHUNK_CACHE_ENTRIES": "0"},
        "embed_query_queue=0": {"RETRIEVAL_EMBED_QUERY_QUEUE": "0"},
        f"before: embed_blas_threads={cores}, embed_wait_policy=runtime": every_core | runtime,
    }


@dataclass(frozen=True)
class ConcurrencyProfile:
    chunks: int = 2000
    levels: tuple[int, ...] = (1, 10, 100)
    calls: int = 600
    """Calls at each level (at least three per caller). With 100, two runs of the levels
    differed by up to 0.06 in the ratio (a collection's pause weighs on a window of a second);
    with 400 in 2 rounds, eight runs of the 10-caller level spread over 0.87 to 0.92; with 600
    in 6 rounds (``concurrency.ROUNDS``), three runs gave 0.907 to 0.913 (0.89 to 0.94 in 2)."""
    search_calls: int = 60
    """Searches and retrievals of one caller per process, for the search comparison."""
    busy_callers: int = 10
    busy_calls: int = 200
    """Retrievals per process with ``busy_callers`` callers."""
    passes: int = 2
    """Processes per thread setting."""


@dataclass(frozen=True)
class Task:
    """What one process measures, and where it writes its figures (JSON)."""

    data_dir: str
    mongodb_uri: str
    mongodb_pid: int
    result: str
    levels: tuple[int, ...]
    """The levels to measure; none: the thread figures."""
    profile: ConcurrencyProfile
    seeds: bool = False
    """Only seed the namespace."""


def best_setting(threads: Mapping[str, Mapping[str, float]]) -> str:
    """The service's own setting, unless another clearly does better: answers at least
    ``MARGIN`` times as many calls a second with many callers (less is within the noise from
    one process to the next on a shared machine), answers one caller no slower, and embeds
    passages at least ``PASSAGE_SHARE`` as fast as the fastest (a setting that buys queries
    with slower ingestion is a choice, not a default)."""
    own = threads[SERVICE_SETTING]
    fastest = max(figures["passages_per_s"] for figures in threads.values())
    better = [
        name
        for name, figures in threads.items()
        if figures["busy_throughput_per_s"] >= MARGIN * own["busy_throughput_per_s"]
        and figures["retrieve_p50_ms"] <= own["retrieve_p50_ms"]
        and figures["passages_per_s"] >= PASSAGE_SHARE * fastest
    ]
    return max(
        better, key=lambda name: threads[name]["busy_throughput_per_s"], default=SERVICE_SETTING
    )


def schedule(names: Sequence[str], passes: int) -> list[str]:
    """Every name ``passes`` times, in order, then in reverse order, and so on: a change in
    the machine's load during the run falls on every setting alike."""
    return [
        name
        for number in range(passes)
        for name in (names if number % 2 == 0 else list(reversed(names)))
    ]


def mean_figures(runs: Sequence[Mapping[str, float]]) -> dict[str, float]:
    return {key: statistics.fmean(run[key] for run in runs) for key in runs[0]}


def run_benchmark(profile: ConcurrencyProfile, on_step: Callable[[str], None]) -> dict:
    """The levels, then every candidate's process ``profile.passes`` times; the figures
    ``retrieval bench concurrency`` writes."""
    settings = candidates(os.cpu_count() or 1)
    runs: dict[str, list[dict]] = {name: [] for name in settings}
    with tempfile.TemporaryDirectory(prefix="retrieval-concurrency-") as directory:
        work = Path(directory)
        with EmbeddedMongoSupervisor(work / "mongo") as mongo:

            def measure(
                number: int, name: str, levels: tuple[int, ...] = (), *, seeds: bool = False
            ) -> dict:
                task = Task(
                    data_dir=str(work / "data"),
                    mongodb_uri=mongo.uri,
                    mongodb_pid=server_pid(mongo),
                    result=str(work / f"result-{number}.json"),
                    levels=levels,
                    seeds=seeds,
                    profile=profile,
                )
                return run_process(task, settings[name])

            on_step(f"seeding {profile.chunks} chunks")
            measure(0, SERVICE_SETTING, seeds=True)
            on_step("the levels")
            levels = measure(0, SERVICE_SETTING, profile.levels)["levels"]
            for number, name in enumerate(schedule(list(settings), profile.passes), start=1):
                on_step(f"{name} ({len(runs[name]) + 1} of {profile.passes})")
                runs[name].append(measure(number, name)["threads"])
    threads = {name: mean_figures(measured) for name, measured in runs.items()}
    return {
        "chunks": profile.chunks,
        **levels,
        "threads": threads,
        "thread_settings": settings,
        "thread_passes": profile.passes,
        "best_threads": best_setting(threads),
    }


def chunk_reads(lookups: Counter) -> tuple[float, float]:
    """The chunk text cache's hits and misses so far (``ServiceMetrics.chunk_cache_lookups``)."""
    counted = {
        sample.labels["result"]: sample.value
        for metric in lookups.collect()
        for sample in metric.samples
        if sample.name.endswith("_total")
    }
    return counted.get("hit", 0.0), counted.get("miss", 0.0)


def server_pid(mongo: EmbeddedMongoSupervisor) -> int:
    if mongo.pid is None:
        raise RuntimeError(f"the embedded MongoDB server is down: {mongo.down_reason()}")
    return mongo.pid


def run_process(task: Task, environment: Mapping[str, str]) -> dict:
    """Runs ``task`` in a process of its own, with ``environment`` and without the OpenMP and
    OpenBLAS variables of this one, which would change every candidate alike."""
    inherited = {
        key: value for key, value in os.environ.items() if not key.startswith(RUNTIME_VARIABLES)
    }
    try:
        subprocess.run(
            [sys.executable, "-m", __name__, json.dumps(asdict(task))],
            env={**inherited, **environment},
            check=True,
            timeout=PROCESS_TIMEOUT_S,
        )
    except subprocess.CalledProcessError as error:
        raise RuntimeError(f"a measuring process failed (exit {error.returncode})") from error
    return json.loads(Path(task.result).read_text())


async def measure_process(task: Task) -> dict:
    profile = task.profile
    settings = embedded_settings(Path(task.data_dir), "ERROR").model_copy(
        update={
            "mongodb_uri": SecretStr(task.mongodb_uri),
            "result_cache_entries": 0,
            "query_vector_cache_entries": 0,
        }
    )
    configure_logging(settings.log_level, settings.log_format)
    container = Container(settings=settings)
    async with running(settings, container) as app:
        if task.seeds:
            await seed_namespace(app, NAMESPACE, profile.chunks, seed=7)
            return {}
        plan = await resolve(container.search_plan)
        target = Target(
            retrieval=app.retrieval,
            raw=await resolve(container.model_embedder),
            index=await resolve(container.vector_index),
            namespace=NAMESPACE,
            depth=plan.depth(TOP_K),
            store_cpu_s=partial(cpu_seconds, task.mongodb_pid),
            chunk_reads=partial(chunk_reads, app.telemetry.metrics.chunk_cache_lookups),
            chunks=await resolve(container.chunk_text_cache),
            leads=await resolve(container.graph_leads),
            passages=tuple(
                chunk.content
                for document in load_documents([KNOWLEDGE_DIR])
                for chunk in app.ingestion.split(document, NAMESPACE)
            )[:PASSAGES],
        )
        await warm_up(target)
        if task.levels:
            return {"levels": await measure_levels(target, task.levels, profile.calls)}
        return {
            "threads": await measure_threads(
                target, profile.search_calls, profile.busy_callers, profile.busy_calls
            )
        }


def main(argument: str) -> None:
    raw = json.loads(argument)
    profile = ConcurrencyProfile(**{**raw["profile"], "levels": tuple(raw["profile"]["levels"])})
    task = Task(**{**raw, "profile": profile, "levels": tuple(raw["levels"])})
    figures = asyncio.run(measure_process(task))
    Path(task.result).write_text(json.dumps(figures))


if __name__ == "__main__":
    main(sys.argv[1])
