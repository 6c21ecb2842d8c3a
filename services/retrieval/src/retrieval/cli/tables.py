from __future__ import annotations

from rich.table import Table

from retrieval.domain.models import RetrievalResult

SNIPPET_CHARS = 90


def snippet(text: str) -> str:
    body = " ".join(text.split("\n\n", 1)[-1].split())
    return body if len(body) <= SNIPPET_CHARS else body[: SNIPPET_CHARS - 1] + "…"


def result_table(result: RetrievalResult, title: str) -> Table:
    table = Table(title=title, title_justify="left")
    for column, justify in [("#", "right"), ("score", "right"), ("document", "left"),
                            ("domain", "left"), ("snippet", "left")]:  # fmt: skip
        table.add_column(column, justify=justify, no_wrap=column != "snippet")
    for rank, match in enumerate(result.matches, start=1):
        table.add_row(
            str(rank), f"{match.score:.3f}", match.document_id, match.domain, snippet(match.content)
        )
    timings = result.timings
    table.caption = (
        f"embed {timings.embed_ms:.1f} ms · search {timings.search_ms:.2f} ms · "
        f"fetch {timings.fetch_ms:.1f} ms · total {timings.total_ms:.1f} ms"
    )
    return table
