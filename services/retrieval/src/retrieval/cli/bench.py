"""``retrieval bench ...``: benchmark commands that print their figures and write reports/."""

from __future__ import annotations

import typer

from retrieval.cli import (
    bench_beir,
    bench_crash,
    bench_fuzz,
    bench_grpc,
    bench_index,
    bench_ingest,
    bench_latency,
    bench_load,
    bench_peers,
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
app.command("load")(bench_load.load)
