"""docs/benchmarks.md is written from the reports alone: each target met or missed by the
figure measured, "not run" for a benchmark without a report, and its charts drawn."""

from __future__ import annotations

import json
from pathlib import Path

from retrieval_bench.report import benchmarks_markdown
from retrieval_bench.targets import read_reports

SCALING = {
    "chunks": 1_005_000,
    "ann_recall_at_10": 0.985,
    "filtered_recall_at_10": 0.93,
    "ann_p95_ms": 4.2,
    "exact_p95_ms": 80.0,
    "upsert_ratio_1m_vs_10k": 1.3,
    "bytes_per_chunk": 3200.0,
    "detail": {
        "writes": [
            {"size": size, "upsert_s_per_record": 2e-5, "bytes_written_per_record": 1560.0,
             "startup_s": 0.1, "memory_bytes_per_record": 3200.0}
            for size in (10_000, 1_000_000)
        ],
        "searches": {
            "size": 1_005_000,
            "queries": 300,
            "100%": {"exact_ms": {"p50": 60.0, "p95": 80.0}, "index_ms": {"p50": 2.0, "p95": 4.2},
                     "recall_at_10": 0.985},
        },
    },
}  # fmt: skip


def figures(ndcg_at_10: float, p95_ms: float) -> dict[str, float]:
    return {"ndcg_at_10": ndcg_at_10, "recall_at_100": 0.93, "both_at_5": 0.6, "both_at_10": 0.7,
            "p50_ms": p95_ms / 2, "p95_ms": p95_ms}  # fmt: skip


SIDE_BY_SIDE = {
    "dataset": "scifact",
    "queries": 300,
    "documents": 5183,
    "several_relevant": False,
    "ours": figures(0.72, 60.0),
    "peers": {
        "fast": {
            "library": "fast 1.0",
            "default": "plain",
            "best": "fused",
            "configurations": {"plain": figures(0.60, 30.0), "fused": figures(0.70, 40.0)},
        },
        "slow": {
            "library": "slow 1.0",
            "default": "only",
            "best": "only",
            "configurations": {"only": figures(0.65, 200.0)},
        },
    },
}
"""Ours is read against each library's best configuration: fused's nDCG@10 and p95, not
plain's."""


def written(tmp_path: Path, reports: dict[str, dict]) -> str:
    directory = tmp_path / "reports"
    directory.mkdir()
    for name, report in reports.items():
        (directory / name).write_text(json.dumps(report))
    return benchmarks_markdown(read_reports(directory), tmp_path / "docs" / "benchmarks")


def row(page: str, target: str) -> str:
    return next(line for line in page.splitlines() if line.startswith(f"| {target} |"))


def test_each_target_is_judged_by_the_figure_in_its_report(tmp_path: Path) -> None:
    hotpotqa = {**SIDE_BY_SIDE, "dataset": "hotpotqa", "several_relevant": True}
    page = written(
        tmp_path,
        {
            "scaling.json": SCALING,
            "peers-scifact.json": SIDE_BY_SIDE,
            "peers-hotpotqa.json": hotpotqa,
        },
    )

    assert row(page, "search p95 at 1M records, ms").endswith(
        "| 4.200 | met | `make bench-scaling` |"
    )
    assert "| 0.930 | **missed** |" in row(page, "recall@10 at 1M, filtered (lowest)")
    assert "| 1.029 | met |" in row(page, "SciFact nDCG@10, ours over the best peer")
    assert "| 1.500 | **missed** |" in row(page, "search p95, ours over the fastest peer")
    assert "| fast | plain | 0.6000 | 0.9300 | 30.0 |" in page
    assert "| best | fused | 0.7000 | 0.9300 | 40.0 |" in page
    assert "| slow | only | 0.6500 | 0.9300 | 200.0 |" in page
    assert "| best | fused | 0.7000 | 0.9300 | 0.6000 | 0.7000 | 40.0 |" in page  # hotpotqa
    assert "`reports/peers-hotpotqa.json`" in page
    assert "| not run |" in row(page, "load: errors among 100 callers")
    assert "| 1,000,000 | 20 µs | 1,560 | 0.10 | 3,200 B |" in page
    charts = tmp_path / "docs" / "benchmarks"
    assert sorted(path.name for path in charts.iterdir()) == ["scaling.png", "side_by_side.png"]


def test_without_reports_every_section_says_it_was_not_run(tmp_path: Path) -> None:
    page = written(tmp_path, {})

    assert "| met |" not in page
    assert "**missed**" not in page
    assert page.count("not run") >= 12
    assert not any((tmp_path / "docs" / "benchmarks").iterdir())


def test_the_replicas_under_faults_are_written_with_every_count(tmp_path: Path) -> None:
    faults = dict.fromkeys(("replica_kill", "index_stall", "mongo_restart", "index_lag"), 20)
    counts = ("internal_errors", "stale_reads", "non_monotonic_reads", "lost_acknowledged_writes")
    replicas = {"replicas": 3, "calls": 9000, "faults": faults, "audit_mismatches": 0,
                "repair_seconds_max": 31.5, "lease_s": 30.0,
                **dict.fromkeys(counts, 0), "stale_reads": 7}  # fmt: skip
    page = written(tmp_path, {"replicas.json": replicas})

    line = next(line for line in page.splitlines() if line.startswith("- `make bench-replicas`"))
    assert "3 replicas, 80 faults (20 replica kills, 20 index stalls, 20 MongoDB" in line
    assert "9,000 calls: 0 INTERNAL, 7 stale reads, 0 non-monotonic reads, 0 lost" in line
    assert "0 audit mismatches; repair at most 31.5 s (lease 30 s)." in line
    assert "| 7 | **missed** |" in row(
        page, "replicas under faults: stale, non-monotonic, lost, INTERNAL, audit"
    )


def test_the_concurrency_table_gives_each_level_s_loop_cpu_per_call(tmp_path: Path) -> None:
    level = {"throughput_per_s": 40.0, "ceiling_per_s": 44.0, "ratio": 0.91, "p50_ms": 24.0,
             "p95_ms": 30.0, "loop_lag_p95_ms": 1.5, "loop_cpu_ms_per_call": 2.25}  # fmt: skip
    page = written(tmp_path, {"concurrency.json": {"levels": {"1": level, "10": level}}})
    assert row(page, "10").endswith("| 1.50 | 2.25 |")
    assert "| loop CPU ms/call |" in page
