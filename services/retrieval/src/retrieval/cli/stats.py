"""``retrieval stats``: what each namespace holds, and whether the stores agree."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from rich.filesize import decimal
from rich.markup import escape
from rich.table import Table

from retrieval.cli.runtime import console, run_here_or_served

if TYPE_CHECKING:
    from retrieval.cli.served import ApplicationCalls
    from retrieval.domain.collection_health import HealthStatus, Orphans
    from retrieval.service.stats import CollectionStats

UNKNOWN = "-"


def count_or_unknown(value: int | None) -> str:
    return UNKNOWN if value is None else str(value)


def size(value: int | None) -> str:
    return "n/a" if value is None else decimal(value)


def coloured(status: HealthStatus) -> str:
    return f"[{status}]{status}[/{status}]"


def out_of_place(orphans: Orphans | None) -> str:
    """Each kind of orphan found, with its count; ``none``, or unknown when not audited."""
    from retrieval.domain.collection_health import ORPHAN_LABELS

    if orphans is None:
        return UNKNOWN
    found = [
        f"{count} {label}"
        for kind, label in ORPHAN_LABELS.items()
        if (count := getattr(orphans, kind))
    ]
    return ", ".join(found) or "none"


def namespace_table(report: CollectionStats) -> Table:
    title = f"model {report.embedding_model}, dimension {count_or_unknown(report.dimension)}"
    table = Table(title=escape(title), title_justify="left")
    table.add_column("namespace", overflow="fold")
    table.add_column("status", no_wrap=True)
    table.add_column("vectors", justify="right", no_wrap=True)
    table.add_column("chunks", justify="right", no_wrap=True)
    table.add_column("orphans")
    for namespace in report.namespaces:
        table.add_row(
            escape(namespace.namespace),
            coloured(namespace.status),
            str(namespace.vector_count),
            count_or_unknown(namespace.chunk_count),
            out_of_place(namespace.orphans),
        )
    table.caption = (
        f"total: {count_or_unknown(report.total_vector_count)} vectors, "
        f"{count_or_unknown(report.total_chunk_count)} chunk texts"
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
    from retrieval.domain.collection_health import HealthStatus

    async def work(app: ApplicationCalls) -> CollectionStats:
        return await app.stats.collect()

    report = run_here_or_served(work, read_only=True)
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
