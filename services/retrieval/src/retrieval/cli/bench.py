"""``retrieval bench ...``: benchmark commands that print their figures and write reports/."""

from __future__ import annotations

from retrieval.cli.lazy import lazy_group

app = lazy_group(
    "Benchmarks: figures printed and written to reports/.",
    {
        "latency": "retrieval.cli.bench_latency:latency",
        "beir": "retrieval.cli.bench_beir:beir",
        "peers": "retrieval.cli.bench_peers:peers",
        "grpc": "retrieval.cli.bench_grpc:grpc",
        "crash": "retrieval.cli.bench_crash:crash",
        "fuzz": "retrieval.cli.bench_fuzz:fuzz",
        "ingest": "retrieval.cli.bench_ingest:ingest",
        "index": "retrieval.cli.bench_index:index",
        "scaling": "retrieval.cli.bench_index:scaling",
        "report": "retrieval.cli.bench_report:report",
        "load": "retrieval.cli.bench_load:load",
        "concurrency": "retrieval.cli.bench_concurrency:concurrency",
        "profile": "retrieval.cli.bench_profile:profile",
        "cli": "retrieval.cli.bench_cli:cli",
        "replicas": "retrieval.cli.bench_replicas:replicas",
    },
)
