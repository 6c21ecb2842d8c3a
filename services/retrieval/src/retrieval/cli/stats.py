from __future__ import annotations

from rich.table import Table

from retrieval.cli.runtime import console, run_with_application
from retrieval.container import Application


def stats() -> None:
    """Vectors and chunk texts per namespace."""

    async def work(app: Application) -> None:
        summary = await app.stats.collect()
        table = Table(title=f"index dimension {summary.dimension}", title_justify="left")
        for column in ("namespace", "vectors", "chunks"):
            table.add_column(column, justify="left" if column == "namespace" else "right")
        for namespace in summary.namespaces:
            table.add_row(
                namespace.namespace, str(namespace.vector_count), str(namespace.chunk_count)
            )
        console.print(table)

    run_with_application(work)
