"""``retrieval bench ...``: benchmark commands that print their figures and write reports/."""

from __future__ import annotations

import typer

from retrieval.cli import (
    bench_beir,
    bench_concurrency,
    bench_crash,
    bench_fuzz,
    bench_grpc,
    bench_index,
    bench_ingest,
    bench_latency,
    bench_load,
    bench_peers,
    bench_profile,
    bench_report,
)

app = typer.Typer(no_args_is_help=True, help="Benchmarks: figures printed and written to reports/.")
app.command("latency")(bench_latency.latency)
app.command("beir")(bench_beir.beir)
app.command("peers")(bench_peers.peers)
app.command("grpc")(bench_grpc.grpc)
app.command("crash")(bench_crash.crash)
app.command("fuzz")(bench_fuzz.fuzz)
app.command("ingest")(bench_ingest.ingest)
app.command("index")(bench_index.index)
app.command("scaling")(bench_index.scaling)
app.command("report")(bench_report.report)
app.command("load")(bench_load.load)
app.command("concurrency")(bench_concurrency.concurrency)
app.command("profile")(bench_profile.profile)
