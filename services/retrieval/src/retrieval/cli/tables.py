"""A retrieval result as a person reads it: a table that fits the terminal, 80 columns
included, each match in one column of its own lines so that its document id is never cut,
and one line of timings."""

from __future__ import annotations

from operator import itemgetter

from rich.table import Table
from rich.text import Text

from retrieval.domain.models import DENSE, RetrievalMatch, RetrievalResult, StageTimings
from retrieval.domain.provenance import location
from retrieval.source_display import readable_source

SNIPPET_CHARS = 90
SLOWEST_SHOWN = 3


def snippet(text: str) -> str:
    body = " ".join(text.split("\n\n", 1)[-1].split())
    return body if len(body) <= SNIPPET_CHARS else body[: SNIPPET_CHARS - 1] + "…"


def described(match: RetrievalMatch) -> Text:
    """The match as a person reads it, a line each: its title, its document id (whole, to be
    copied into ``delete``), where it is (source, section, pages), and a snippet of its text."""
    cell = Text(match.title, style="bold")
    cell.append("\n" + match.document_id, style="dim")
    where = location(readable_source(match.source), match.section, match.pages)
    if where:
        cell.append("\n" + " · ".join(where), style="dim")
    cell.append("\n" + snippet(match.content))
    return cell


def timing(timings: StageTimings, every_stage: bool) -> str:
    """The whole call and its slowest stages, or every stage in the order they ran."""
    stages = list(timings.stages.items())
    if not every_stage:
        slowest = sorted(stages, key=itemgetter(1), reverse=True)[:SLOWEST_SHOWN]
        stages = [(stage, ms) for stage, ms in slowest if round(ms, 1)]
    spent = ", ".join(f"{stage} {ms:.1f} ms" for stage, ms in stages)
    return f"{timings.total_ms:.1f} ms" + (f" ({spent})" if spent else "")


def result_table(result: RetrievalResult, title: str, *, every_stage: bool = False) -> Table:
    table = Table(title=title, title_justify="left", caption_justify="left")
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("cosine", justify="right", no_wrap=True)
    table.add_column("match", overflow="fold")
    for rank, match in enumerate(result.matches, start=1):
        cosine = match.scores.get(DENSE)
        table.add_row(
            str(rank),
            f"{match.score:.3f}",
            "" if cosine is None else f"{cosine:.3f}",
            described(match),
        )
    notes = [timing(result.timings, every_stage)]
    if result.query_truncated:
        notes.append("query cut to the model's window")
    if result.degraded:
        notes.append(f"failed: {', '.join(result.degraded)}")
    table.caption = " · ".join(notes)
    return table
