"""Where ``retrieve()`` of the top 100 spends its time on a BEIR dataset: each stage's p50
and p95, the CPU time of this process and of the embedded MongoDB server per call, and what
py-spy samples in each.

The corpus is written as ``retrieval bench beir`` writes it (``write_corpus``: one chunk per
document, the dataset's passage vectors). Every judged query is asked once first, which puts
its vector in the query vector cache, so the embed stage is a look-up as in ``retrieval bench
peers``; the result cache is off, so every call runs the whole pipeline. Then every query is
asked ``rounds`` times with the default settings and timed, and once more while ``py-spy
record`` samples each process without pausing it (so that sampling costs the timed calls
nothing). py-spy leaves out threads that wait on a lock or a socket, so its samples show
where each process spends CPU time.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from pydantic import Field

from retrieval.container import Container
from retrieval.domain.models import MAX_TOP_K, Frozen, RetrievalQuery, StageTimings
from retrieval.lifecycle import running
from retrieval.ports.embedder import Matrix
from retrieval.settings import Settings
from retrieval_bench.beir.data import BeirDataset
from retrieval_bench.beir.run import (
    Progress,
    advance,
    corpus_domain,
    stage_latencies,
    write_corpus,
)
from retrieval_bench.concurrency import cpu_seconds
from retrieval_bench.peers.side_by_side import peer_settings

PY_SPY = "py-spy"
SAMPLES_PER_S = 250
STOP_TIMEOUT_S = 30.0


class HotFrame(Frozen):
    """One function and the share of a process's samples it was running in."""

    function: str = Field(description="Function name and file, as py-spy names them.")
    own: float = Field(description="Share of samples in the function itself (0 to 1).")
    total: float = Field(description="Share of samples in it or in what it called (0 to 1).")


class ProcessProfile(Frozen):
    samples: int = Field(description="Samples of the threads py-spy saw running.")
    by_own: tuple[HotFrame, ...] = Field(description="Most own samples first.")
    by_total: tuple[HotFrame, ...] = Field(description="Most samples in or under it first.")


class ProfileReport(Frozen):
    documents: int
    queries: int = Field(description="Timed calls: judged queries times rounds.")
    top_k: int
    latency_ms: dict[str, dict[str, float]] = Field(
        description="p50/p95/max of each stage, and of the whole call under 'total'."
    )
    cpu_ms_per_call: dict[str, float] = Field(
        description="CPU time of each process ('client', 'server') over the timed calls, per "
        "call: what the latency is made of, whatever else the machine runs."
    )
    processes: dict[str, ProcessProfile] = Field(
        description="py-spy's samples by process ('client': this one; 'server': the embedded "
        "MongoDB); empty when py-spy did not run."
    )


def py_spy_executable() -> str | None:
    beside_python = Path(sys.executable).with_name(PY_SPY)
    return str(beside_python) if beside_python.exists() else shutil.which(PY_SPY)


@contextmanager
def sampling(
    executable: str, pids: Mapping[str, int], directory: Path
) -> Iterator[dict[str, Path]]:
    """``py-spy record`` of each process while the block runs, as collapsed stacks (one line
    per stack: frames from the outermost, separated by ``;``, then the sample count) in
    ``directory/profile-<name>.stacks``, which the block gets by name once it has ended (a
    process py-spy could not sample has none)."""
    outputs = {name: directory / f"profile-{name}.stacks" for name in pids}
    samplers = [
        subprocess.Popen(
            [
                executable, "record", "--pid", str(pid), "--rate", str(SAMPLES_PER_S),
                "--format", "raw", "--nolineno", "--nonblocking", "--output", str(outputs[name]),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for name, pid in pids.items()
    ]  # fmt: skip
    try:
        yield outputs
    finally:
        for sampler in samplers:
            sampler.send_signal(signal.SIGINT)
        for sampler in samplers:
            sampler.wait(timeout=STOP_TIMEOUT_S)
        for name in [name for name, output in outputs.items() if not output.exists()]:
            del outputs[name]


def hot_frames(stacks: str, top: int) -> ProcessProfile:
    """The ``top`` functions by own samples and by samples in or under them, from collapsed
    stacks; a function that recurses counts once per sample."""
    own: Counter[str] = Counter()
    total: Counter[str] = Counter()
    samples = 0
    for line in stacks.splitlines():
        path, _, count = line.rpartition(" ")
        if not path:
            continue
        frames = path.split(";")
        samples += int(count)
        own[frames[-1]] += int(count)
        for frame in set(frames):
            total[frame] += int(count)

    def ranked(counter: Counter[str]) -> tuple[HotFrame, ...]:
        return tuple(
            HotFrame(function=name, own=own[name] / samples, total=total[name] / samples)
            for name, _ in counter.most_common(top)
        )

    return ProcessProfile(samples=samples, by_own=ranked(own), by_total=ranked(total))


def profile_settings(settings: Settings, queries: int) -> Settings:
    """``settings`` without a result cache and with room for every query's vector."""
    return peer_settings(settings, queries).model_copy(update={"result_cache_entries": 0})


async def profile_retrieval(
    container: Container,
    dataset: BeirDataset,
    vectors: Matrix,
    directory: Path,
    *,
    rounds: int = 1,
    top: int = 25,
    sample: bool = True,
    progress: Progress | None = None,
) -> ProfileReport:
    """Stage timings and CPU time of every judged query asked ``rounds`` times (after one
    warm-up pass) of the application ``container`` runs (its settings from
    ``profile_settings``); then, when ``sample`` and py-spy is installed, every query asked
    once more while py-spy samples this process and the embedded MongoDB server (when no URI
    is configured), for their ``top`` hot functions. The timed calls run unsampled."""
    queries = list(dataset.judged_queries.values())
    executable = py_spy_executable() if sample else None
    processes: dict[str, ProcessProfile] = {}
    async with running(container.settings(), container) as app:
        namespace = f"profile-{uuid.uuid4().hex[:8]}"
        domain = corpus_domain(app.settings.allowed_domains)
        requests = [
            RetrievalQuery(query=text, top_k=MAX_TOP_K, namespace=namespace) for text in queries
        ]

        async def ask(stage: str, asked: list[RetrievalQuery]) -> list[StageTimings]:
            timings = []
            for done, request in enumerate(asked, start=1):
                timings.append((await app.retrieval.retrieve_query(request)).timings)
                advance(progress, stage, done, len(asked))
            return timings

        try:
            await write_corpus(app.ingestion, dataset.corpus, vectors, namespace, domain, progress)
            await ask("warm", requests)
            pids = {"client": os.getpid()}
            server = container.embedded_mongo()
            if server is not None and server.pid is not None:
                pids["server"] = server.pid
            before = {name: cpu_seconds(pid) for name, pid in pids.items()}
            timings = await ask("ask", requests * rounds)
            cpu_ms = {
                name: (cpu_seconds(pid) - before[name]) * 1e3 / len(timings)
                for name, pid in pids.items()
            }
            if executable is not None:
                with sampling(executable, pids, directory) as outputs:
                    await ask("sample", requests)
                for name, output in outputs.items():
                    processes[name] = hot_frames(output.read_text(encoding="utf-8"), top)
        finally:
            await app.library.delete_namespace(namespace)
    return ProfileReport(
        documents=len(dataset.corpus),
        queries=len(timings),
        top_k=MAX_TOP_K,
        latency_ms=stage_latencies(timings),
        cpu_ms_per_call=cpu_ms,
        processes=processes,
    )
