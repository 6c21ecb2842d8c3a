from __future__ import annotations

import json
import uuid
from pathlib import Path

import typer

from retrieval.cli.runtime import console, load_settings, run
from retrieval.container import Container
from retrieval.lifecycle import resolve, running
from retrieval_bench.ingestion import measure_ingestion


def ingest(
    copies: int = typer.Option(5, help="Times the bundled knowledge base is ingested over."),
    reports: Path = typer.Option(Path("reports"), help="Where ingest.json is written."),
) -> None:
    """Ingestion throughput against the raw embedder; re-ingest of unchanged, relabelled and
    renamed documents."""

    async def main() -> dict:
        settings = load_settings()
        container = Container(settings=settings)
        async with running(settings, container) as app:
            raw = await resolve(container.model_embedder)
            namespace = f"bench-ingest-{uuid.uuid4().hex[:8]}"
            with console.status(f"ingesting {copies} copies of the knowledge base"):
                return await measure_ingestion(app.ingestion, app.library, raw, copies, namespace)

    figures = run(main())
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "ingest.json").write_text(json.dumps(figures, indent=2))
    seconds = figures["seconds"]
    console.print(
        f"{figures['documents']} documents, {figures['chunks']} chunks\n"
        f"raw embedder {figures['raw_embedder_chunks_per_s']:.1f} chunks/s; ingest "
        f"{figures['ingest_documents_per_s']:.2f} documents/s, "
        f"{figures['ingest_chunks_per_s']:.1f} chunks/s "
        f"(ratio to raw {figures['ingest_to_raw_ratio']:.3f})\n"
        f"re-ingest: unchanged {seconds['unchanged']:.2f} s, metadata changed "
        f"{seconds['metadata_changed']:.2f} s, renamed {seconds['renamed']:.2f} s "
        f"(first ingest {seconds['first_ingest']:.2f} s) · written {reports / 'ingest.json'}"
    )
