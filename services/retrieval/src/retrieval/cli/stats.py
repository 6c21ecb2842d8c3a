from __future__ import annotations

from rich.table import Table

from retrieval.cli.runtime import console, run_with_application
from retrieval.container import Application


def stats() -> None:
    """Vectors and chunk texts per namespace."""

    async def work(app: Application) -> None:
        index = await app.index.stats()
        table = Table(title=f"index dimension {index.dimension}", title_justify="left")
        for column in ("namespace", "vectors", "chunks"):
            table.add_column(column, justify="left" if column == "namespace" else "right")
        for name, namespace in sorted(index.namespaces.items()):
            chunks = await app.chunks.count(name)
            table.add_row(name, str(namespace.vector_count), str(chunks))
        console.print(table)

    run_with_application(work)
