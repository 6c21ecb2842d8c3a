from __future__ import annotations

import json
import tempfile
from pathlib import Path

import typer
from secantus import SecantusDBServer

from retrieval.cli.runtime import console, run
from retrieval_bench.backup_round_trip import pinecone_standins, round_trip
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
    chunks: int = typer.Option(10_000, help="Chunks in the namespace moved."),
    reports: Path = typer.Option(Path("reports"), help="Where backup-round-trip.json is written."),
) -> None:
    """A namespace from the embedded stack to the Pinecone and MongoDB stand-ins and back by
    backup and restore; identical by the audit at each end."""
    server = SecantusDBServer(storage_path=":memory:", port=0)
    server.start()
    try:
        with (
            console.status(f"moving {chunks} chunks there and back"),
            pinecone_standins() as pinecone,
            tempfile.TemporaryDirectory(prefix="retrieval-bench-round-trip-") as workdir,
        ):
            trip = run(round_trip(chunks, Path(workdir), server.uri, pinecone))
    finally:
        server.stop()
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "backup-round-trip.json").write_text(json.dumps(trip.as_dict(), indent=2))
    seconds = trip.seconds
    console.print(
        f"{trip.documents} documents, {trip.chunks} chunks: backup "
        f"{seconds['backup_embedded']:.1f} s, "
        f"restore on Pinecone and MongoDB {seconds['restore_pinecone']:.1f} s, backup there "
        f"{seconds['backup_pinecone']:.1f} s, restore back {seconds['restore_embedded']:.1f} s; "
        f"identical at each end: {'yes' if trip.identical else 'NO'} · written "
        f"{reports / 'backup-round-trip.json'}"
    )
    if not trip.identical:
        raise typer.Exit(code=1)
