"""What each benchmark must reach, read from the reports of the last runs
(``reports/*.json``): a target names its report, the figure it takes from it and the bound
the figure must meet."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from retrieval.evaluation.reports import number
from retrieval_bench.peers.side_by_side import SideBySide, report_file

Reports = dict[str, Any]
NOT_RUN = "not run"
FAULT_COUNTS = (
    "stale_reads",
    "non_monotonic_reads",
    "lost_acknowledged_writes",
    "internal_errors",
    "audit_mismatches",
)
"""What callers of the replicas must never meet under faults (``retrieval bench replicas``)."""


@dataclass(frozen=True)
class Target:
    name: str
    report: str
    measured: Callable[[Reports], float]
    met: Callable[[float], bool]
    wanted: str
    command: str


def worst_peer_ratio(reports: Reports, key: str) -> float:
    """Ours over the best peer (quality) or the fastest peer (latency), each peer library in its
    best configuration."""
    ratios = SideBySide.model_validate(reports["side_by_side"]).ratios(key).values()
    return min(ratios) if key.startswith(("ndcg", "recall")) else max(ratios)


def lowest_concurrency_ratio(reports: Reports) -> float:
    return min(level["ratio"] for level in reports["concurrency"]["levels"].values())


TARGETS = (
    Target("search p95 at 1M records, ms", "scaling", lambda r: r["scaling"]["ann_p95_ms"],
           lambda v: v <= 10, "<= 10", "make bench-scaling"),
    Target("recall@10 at 1M, no filter", "scaling", lambda r: r["scaling"]["ann_recall_at_10"],
           lambda v: v >= 0.98, ">= 0.98", "make bench-scaling"),
    Target("recall@10 at 1M, filtered (lowest)", "scaling",
           lambda r: r["scaling"]["filtered_recall_at_10"], lambda v: v >= 0.95, ">= 0.95",
           "make bench-scaling"),
    Target("upsert cost per record, 1M over 10k", "scaling",
           lambda r: r["scaling"]["upsert_ratio_1m_vs_10k"], lambda v: v <= 2, "<= 2",
           "make bench-scaling"),
    Target("concurrent callers: throughput over the embedder's (lowest level)", "concurrency",
           lowest_concurrency_ratio, lambda v: v >= 0.9, ">= 0.90", "make bench-concurrency"),
    Target("ingestion chunks/s over the raw embedder's", "ingest",
           lambda r: r["ingest"]["ingest_to_raw_ratio"], lambda v: v >= 0.9, ">= 0.90",
           "make bench-ingest"),
    Target("restore chunks/s over the raw stores'", "restore",
           lambda r: r["restore"]["restore_to_raw_ratio"], lambda v: v >= 0.5, ">= 0.50",
           "make bench-restore"),
    Target("SciFact nDCG@10, ours over the best peer", "side_by_side",
           lambda r: worst_peer_ratio(r, "ndcg_at_10"), lambda v: v >= 1, ">= 1",
           "make bench-peers"),
    Target("search p95, ours over the fastest peer", "side_by_side",
           lambda r: worst_peer_ratio(r, "p95_ms"), lambda v: v < 1, "< 1", "make bench-peers"),
    Target("load: errors among 100 callers", "load", lambda r: r["load"]["errors"],
           lambda v: v == 0, "0", "make load"),
    Target("fuzz: failures", "fuzz",
           lambda r: sum(t["failures"] for t in r["fuzz"]["targets"].values()),
           lambda v: v == 0, "0", "make fuzz"),
    Target("crash: recovered states that match no write", "crash",
           lambda r: r["crash"]["mismatches"], lambda v: v == 0, "0", "make crash"),
    Target("replicas under faults: stale, non-monotonic, lost, INTERNAL, audit", "replicas",
           lambda r: sum(r["replicas"].get(count, 0) for count in FAULT_COUNTS),
           lambda v: v == 0, "0", "make bench-replicas"),
    Target("golden hit@5 over the suite's own minimum", "golden",
           lambda r: r["golden"]["hit_at_5"] / r["golden"]["min_hit_at_5"], lambda v: v >= 1,
           ">= 1", "make golden"),
)  # fmt: skip

REPORTS = {
    "golden": "golden.json",
    "beir": "beir-scifact.json",
    "side_by_side": report_file("scifact"),
    "side_by_side_hotpotqa": report_file("hotpotqa"),
    "latency": "bench.json",
    "grpc": "bench-grpc.json",
    "ingest": "ingest.json",
    "restore": "restore.json",
    "index": "index.json",
    "scaling": "scaling.json",
    "concurrency": "concurrency.json",
    "load": "load.json",
    "crash": "crash.json",
    "fuzz": "fuzz.json",
    "replicas": "replicas.json",
}


def read_reports(directory: Path) -> Reports:
    """The reports found in ``directory``, by name; a missing one is left out."""
    return {
        name: json.loads((directory / file).read_text())
        for name, file in REPORTS.items()
        if (directory / file).exists()
    }


def target_rows(reports: Reports) -> list[list[str]]:
    rows = []
    for target in TARGETS:
        if target.report not in reports:
            rows.append([target.name, target.wanted, NOT_RUN, "-", f"`{target.command}`"])
            continue
        value = target.measured(reports)
        verdict = "met" if target.met(value) else "**missed**"
        rows.append([target.name, target.wanted, number(value), verdict, f"`{target.command}`"])
    return rows
