"""Latency of ``retrieve()`` on a namespace of synthetic chunks derived from real embeddings.

Embedding 10,000 passages with the local model would take half an hour, so the corpus
is generated: the demo knowledge base is chunked and embedded for real, and every
generated chunk is one of those vectors with noise added (cosine about 0.9 to its
source), stored with its text in the chunk repository like any ingested chunk. The
queries are real questions embedded as queries on every call.
"""

from __future__ import annotations

import itertools
import random
import resource
import statistics
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from retrieval.adapters.files.document_files import load_documents
from retrieval.demo import KNOWLEDGE_DIR
from retrieval.domain.models import DEFAULT_DOMAINS, DENSE, RagDocument
from retrieval.evaluation.percentiles import percentile, summary
from retrieval.lifecycle import Application

WRITE_BATCH = 2000
UNCACHED = {"result_cache_entries": 0, "query_vector_cache_entries": 0}
"""Settings under which every path computes every query: no result or query vector an
earlier path left."""
NOISE = 0.018
QUESTION_STARTS = (
    "what causes", "how to control", "symptoms of", "best practice for", "effect of weather on",
    "how do growers manage", "when does", "signs of", "cost of", "regional differences in",
    "how to measure", "why does", "prevention of", "treatment for", "monitoring",
    "guidelines on", "history of", "research on", "grading of", "risks from",
)  # fmt: skip
TOPICS = (
    "blister blight", "grey blight", "red rust", "tea mosquito bug", "red spider mite",
    "pruning cycles", "plucking rounds", "soil acidity", "nitrogen fertiliser", "shade trees",
    "drought stress", "frost damage", "monsoon rain", "hail storms", "withering",
    "oxidation time", "orthodox grading", "CTC processing", "first flush", "Assam gardens",
    "Darjeeling estates", "Nilgiris winter", "Kenyan highlands", "Sri Lankan uva", "leaf quality",
)  # fmt: skip


@dataclass(frozen=True)
class LatencyReport:
    chunks: int
    queries: int
    figures: dict


def questions(count: int, seed: int) -> list[str]:
    pairs = [f"{start} {topic}" for start, topic in itertools.product(QUESTION_STARTS, TOPICS)]
    random.Random(seed).shuffle(pairs)
    return list(itertools.islice(itertools.cycle(pairs), count))


async def seed_namespace(app: Application, namespace: str, size: int, seed: int) -> None:
    """Write ``size`` one-chunk documents derived from the demo knowledge base's chunks."""
    sources = [
        chunk
        for document in load_documents([KNOWLEDGE_DIR])
        for chunk in app.ingestion.split(document, namespace)
    ]
    vectors = await app.ingestion.embed_passages([chunk.content for chunk in sources])
    rng = np.random.default_rng(seed)
    for start in range(0, size, WRITE_BATCH):
        rows = range(start, min(start + WRITE_BATCH, size))
        documents = [
            RagDocument(
                document_id=f"bench-{n:06d}",
                title=sources[n % len(sources)].title,
                domain=sources[n % len(sources)].domain,
                content=sources[n % len(sources)].content,
                metadata=sources[n % len(sources)].metadata,
            )
            for n in rows
        ]
        noisy = np.stack([vectors[n % len(sources)] for n in rows])
        noisy += rng.normal(0, NOISE, noisy.shape).astype(np.float32)
        await app.ingestion.ingest_embedded(documents, noisy, namespace)


async def measure(
    app: Application,
    *,
    size: int = 10_000,
    queries: int = 500,
    top_k: int = 10,
    warmup: int = 20,
    seed: int = 7,
    on_query: Callable[[], None] | None = None,
) -> LatencyReport:
    namespace = f"bench-latency-{uuid.uuid4().hex[:8]}"
    rng = random.Random(seed)
    domains = sorted(DEFAULT_DOMAINS)
    try:
        await seed_namespace(app, namespace, size, seed)
        asked = questions(warmup + queries, seed)
        rows = []
        for n, question in enumerate(asked):
            scope = rng.sample(domains, rng.randint(1, 2)) if n % 2 else []
            result = await app.retrieval.retrieve(question, scope, top_k, 0.0, namespace)
            if n >= warmup and not result.cached:
                rows.append((result.timings, bool(scope)))
                if on_query is not None:
                    on_query()
    finally:
        await app.library.delete_namespace(namespace)
    return LatencyReport(chunks=size, queries=len(rows), figures=figures(rows))


def figures(rows: list) -> dict:
    stage = {
        name: [getattr(t, f"{name}_ms") for t, _ in rows]
        for name in ("embed", "search", "fetch", "total")
    }
    ratios = [t.total_ms / (t.search_ms + t.fetch_ms) for t, _ in rows]
    stages = sorted({name for t, _ in rows for name in t.stages})
    trips = sorted({name for t, _ in rows for name in t.round_trips})
    filtered = [t.stages[DENSE] for t, scoped in rows if scoped]
    unfiltered = [t.stages[DENSE] for t, scoped in rows if not scoped]
    return {
        "p50_ms": {name: percentile(values, 50) for name, values in stage.items()},
        "p95_ms": {name: percentile(values, 95) for name, values in stage.items()},
        "stage_p50_ms": {
            name: percentile([t.stages.get(name, 0.0) for t, _ in rows], 50) for name in stages
        },
        "round_trips_mean": {
            name: statistics.fmean(t.round_trips.get(name, 0) for t, _ in rows) for name in trips
        },
        "round_trips_per_call_mean": statistics.fmean(sum(t.round_trips.values()) for t, _ in rows),
        "overhead_ratio_p50": percentile(ratios, 50),
        "overhead_ratio_p95": percentile(ratios, 95),
        "dense_ms_unfiltered": summary(unfiltered),
        "dense_ms_domain_filtered": summary(filtered),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
