from __future__ import annotations

from rich.table import Table
from rich.text import Text

from retrieval.cli.sources import shown
from retrieval.domain.models import DENSE, RetrievalMatch, RetrievalResult
from retrieval.domain.provenance import location

SNIPPET_CHARS = 90


def snippet(text: str) -> str:
    body = " ".join(text.split("\n\n", 1)[-1].split())
    return body if len(body) <= SNIPPET_CHARS else body[: SNIPPET_CHARS - 1] + "…"


def provenance(match: RetrievalMatch) -> Text:
    """The match's title, then its document and where it is: source, section, pages."""
    cell = Text(match.title, style="bold")
    where = location(shown(match.source), match.section, match.pages)
    cell.append("\n" + " · ".join([match.document_id, *where]), style="dim")
    return cell


def result_table(result: RetrievalResult, title: str) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("cosine", justify="right", no_wrap=True)
    table.add_column("document", overflow="fold", ratio=2)
    table.add_column("snippet", overflow="fold", ratio=3)
    for rank, match in enumerate(result.matches, start=1):
        cosine = match.scores.get(DENSE)
        table.add_row(
            str(rank),
            f"{match.score:.3f}",
            "" if cosine is None else f"{cosine:.3f}",
            provenance(match),
            snippet(match.content),
        )
    timings = result.timings
    notes = [f"{stage} {ms:.1f} ms" for stage, ms in timings.stages.items()]
    notes.append(f"total {timings.total_ms:.1f} ms")
    if result.query_truncated:
        notes.append("query cut to the model's window")
    if result.degraded:
        notes.append(f"failed: {', '.join(result.degraded)}")
    table.caption = " · ".join(notes)
    return table
