from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

import typer
from rich.table import Table

from retrieval.cli.runtime import console, run
from retrieval.errors import RetrievalError
from retrieval_bench.backup_round_trip import Route, pinecone_standins, round_trip
from retrieval_bench.beir.data import default_dataset_name, load_dataset, load_embeddings
from retrieval_bench.beir_round_trip import FIRST, BeirLeg, BeirRoundTrip, printed
from retrieval_bench.cli.beir import DEFAULT_EMBEDDINGS
from retrieval_bench.restore import measure_restore


def restore(
    chunks: int = typer.Option(10_000, help="Chunks in the namespace backed up and restored."),
    rounds: int = typer.Option(3, help="Times each is measured, in turn (medians kept)."),
    reports: Path = typer.Option(Path("reports"), help="Where restore.json is written."),
) -> None:
    """Backup and restore throughput on the embedded stack, beside the raw stores'."""
    with console.status(f"backing up and restoring {chunks} chunks, {rounds} rounds"):
        figures = run(measure_restore(chunks, rounds))
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "restore.json").write_text(json.dumps(figures, indent=2))
    per_s = figures["chunks_per_s"]
    console.print(
        f"{figures['documents']} documents, {figures['chunks']} chunks, "
        f"{figures['rounds']} rounds (chunks/s, medians)\n"
        f"raw stores {per_s['raw']:.0f} · backup {per_s['backup']:.0f} "
        f"(ratio to raw {figures['backup_to_raw_ratio']:.2f}) · restore {per_s['restore']:.0f} "
        f"(ratio to raw {figures['restore_to_raw_ratio']:.2f}) · written {reports / 'restore.json'}"
    )


def backup_round_trip(
    chunks: int = typer.Option(10_000, help="Chunks in the namespace moved, at least."),
    data: Path | None = typer.Option(
        None,
        "--data",
        exists=True,
        file_okay=False,
        help="A BEIR dataset directory (corpus.jsonl, queries.jsonl, qrels/test.tsv, "
        f"{DEFAULT_EMBEDDINGS}) moved instead of estate notes, and its judged queries scored "
        "at each end.",
    ),
    reports: Path = typer.Option(Path("reports"), help="Where the report JSON is written."),
) -> None:
    """A namespace from the embedded stack to the Pinecone and MongoDB stand-ins and back by
    backup and restore; identical by the audit at each end (and, with --data, the BEIR
    figures of the copy that came back the original's)."""
    reports.mkdir(parents=True, exist_ok=True)
    with (
        pinecone_standins() as pinecone,
        tempfile.TemporaryDirectory(prefix="retrieval-bench-round-trip-") as workdir,
    ):
        if data is not None:
            passed = beir_leg(data, Route(Path(workdir), pinecone, hash_vectors=False), reports)
        else:
            passed = estate_notes_leg(chunks, Route(Path(workdir), pinecone), reports)
    if not passed:
        raise typer.Exit(code=1)


def estate_notes_leg(chunks: int, route: Route, reports: Path) -> bool:
    with console.status(f"moving {chunks} chunks there and back"):
        trip = run(round_trip(chunks, route))
    target = reports / "backup-round-trip.json"
    target.write_text(json.dumps(trip.as_dict(), indent=2))
    seconds = trip.seconds
    console.print(
        f"{trip.documents} documents, {trip.chunks} chunks: backup "
        f"{seconds['backup_embedded']:.1f} s, "
        f"restore on Pinecone and MongoDB {seconds['restore_pinecone']:.1f} s, backup there "
        f"{seconds['backup_pinecone']:.1f} s, restore back {seconds['restore_embedded']:.1f} s; "
        f"identical at each end: {'yes' if trip.identical else 'NO'} · written {target}"
    )
    return trip.identical


def beir_leg(data: Path, route: Route, reports: Path) -> bool:
    name = default_dataset_name(data)
    try:
        dataset = load_dataset(
            data / "corpus.jsonl", data / "queries.jsonl", data / "qrels" / "test.tsv"
        )
        vectors = load_embeddings(data / DEFAULT_EMBEDDINGS)
    except RetrievalError as error:
        console.print(f"[red]error:[/red] {error}")
        raise typer.Exit(code=1) from error
    leg = BeirLeg(dataset, name, vectors, random.Random())
    with console.status(f"moving {len(dataset.corpus)} {name} documents there and back"):
        trip = run(leg.round_trip(route))
    target = reports / f"backup-round-trip-beir-{name}.json"
    target.write_text(json.dumps(trip.as_dict(), indent=2))
    console.print(round_trip_table(trip))
    seconds = ", ".join(f"{step} {s:.1f} s" for step, s in trip.seconds.items())
    console.print(
        f"equal (identical by the audit, nDCG@10 and Recall@100 the same to 4 decimals): "
        f"{'yes' if trip.equal else 'NO'}; judged queries whose first {FIRST} differ on the "
        f"copy: {trip.reordered}\n{seconds} · written {target}"
    )
    return trip.equal


def round_trip_table(trip: BeirRoundTrip) -> Table:
    table = Table(
        title=f"beir-{trip.name}: {trip.documents} documents, {trip.chunks} chunks, "
        f"{trip.ends['embedded'].figures.queries} judged queries",
        title_justify="left",
    )
    for column in ("end", "audit", "chunks", "nDCG@10", "Recall@100"):
        table.add_column(column, justify="left" if column == "end" else "right")
    for end, scored in trip.ends.items():
        table.add_row(
            end.replace("_", " "),
            "clean" if scored.state.clean else "NOT CLEAN",
            str(len(scored.state.stores["texts"])),
            printed(scored.figures.ndcg_at_10),
            printed(scored.figures.recall_at_100),
        )
    return table
