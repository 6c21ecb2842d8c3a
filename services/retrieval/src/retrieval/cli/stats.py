from __future__ import annotations

import typer
from rich.filesize import decimal
from rich.markup import escape
from rich.table import Table

from retrieval.cli.runtime import console, run_with_application
from retrieval.container import Application
from retrieval.domain.collection_health import HealthStatus
from retrieval.service.stats import CollectionStats

UNKNOWN = "-"
ORPHAN_COLUMNS = {
    "texts_without_vectors": "texts w/o vectors",
    "vectors_without_texts": "vectors w/o texts",
    "texts_without_keywords": "keywords missing",
    "keywords_without_texts": "keywords orphaned",
    "stale_chunks": "stale",
    "pending_documents": "pending docs",
}


def shown(value: int | None) -> str:
    return UNKNOWN if value is None else str(value)


def size(value: int | None) -> str:
    return "n/a" if value is None else decimal(value)


def coloured(status: HealthStatus) -> str:
    return f"[{status}]{status}[/{status}]"


def namespace_table(report: CollectionStats) -> Table:
    title = f"model {report.embedding_model}, dimension {shown(report.dimension)}"
    table = Table(title=escape(title), title_justify="left")
    table.add_column("namespace", justify="left")
    table.add_column("status", justify="left")
    for column in ("vectors", "chunks", *ORPHAN_COLUMNS.values()):
        table.add_column(column, justify="right")
    for namespace in report.namespaces:
        orphans = namespace.orphans
        table.add_row(
            escape(namespace.namespace),
            coloured(namespace.status),
            str(namespace.vector_count),
            shown(namespace.chunk_count),
            *(
                UNKNOWN if orphans is None else str(getattr(orphans, kind))
                for kind in ORPHAN_COLUMNS
            ),
        )
    table.caption = (
        f"total: {shown(report.total_vector_count)} vectors, "
        f"{shown(report.total_chunk_count)} chunk texts"
    )
    return table


def footprint_table(report: CollectionStats) -> Table:
    table = Table(title="embedded stores", title_justify="left")
    table.add_column("store", justify="left")
    table.add_column("disk", justify="right")
    table.add_column("memory", justify="right")
    for footprint in report.footprints:
        table.add_row(footprint.store, size(footprint.disk_bytes), size(footprint.memory_bytes))
    return table


def stats(
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Vectors, chunk texts and orphans per namespace, the embedded stores' sizes and the
    health status. Audits every namespace (lists every id); the exit code is 1 when red."""

    async def work(app: Application) -> CollectionStats:
        return await app.stats.collect()

    report = run_with_application(work)
    if as_json:
        print(report.model_dump_json(indent=2))
    else:
        console.print(namespace_table(report))
        if report.footprints:
            console.print(footprint_table(report))
        console.print(f"status: {coloured(report.status)}")
        for reason in report.reasons:
            console.print(f"  {escape(reason)}")
    if report.status is HealthStatus.RED:
        raise typer.Exit(code=1)
