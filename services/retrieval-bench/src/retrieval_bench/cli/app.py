"""``retrieval bench ...``: benchmark commands that print their figures and write reports/."""

from __future__ import annotations

from retrieval.cli.lazy import lazy_group

app = lazy_group(
    "Benchmarks: figures printed and written to reports/.",
    {
        "latency": "retrieval_bench.cli.latency:latency",
        "beir": "retrieval_bench.cli.beir:beir",
        "peers": "retrieval_bench.cli.peers:peers",
        "grpc": "retrieval_bench.cli.grpc:grpc",
        "crash": "retrieval_bench.cli.crash:crash",
        "fuzz": "retrieval_bench.cli.fuzz:fuzz",
        "ingest": "retrieval_bench.cli.ingest:ingest",
        "restore": "retrieval_bench.cli.restore:restore",
        "backup-round-trip": "retrieval_bench.cli.restore:backup_round_trip",
        "index": "retrieval_bench.cli.index:index",
        "scaling": "retrieval_bench.cli.index:scaling",
        "report": "retrieval_bench.cli.report:report",
        "load": "retrieval_bench.cli.load:load",
        "concurrency": "retrieval_bench.cli.concurrency:concurrency",
        "profile": "retrieval_bench.cli.profile:profile",
        "cli": "retrieval_bench.cli.command_line:cli",
        "replicas": "retrieval_bench.cli.replicas:replicas",
        "mcp": "retrieval_bench.cli.mcp:mcp",
    },
)
