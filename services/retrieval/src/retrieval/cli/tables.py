from __future__ import annotations

from rich.table import Table

from retrieval.domain.models import DENSE, RetrievalResult

SNIPPET_CHARS = 90


def snippet(text: str) -> str:
    body = " ".join(text.split("\n\n", 1)[-1].split())
    return body if len(body) <= SNIPPET_CHARS else body[: SNIPPET_CHARS - 1] + "…"


def result_table(result: RetrievalResult, title: str) -> Table:
    table = Table(title=title, title_justify="left")
    for column, justify in [("#", "right"), ("score", "right"), ("cosine", "right"),
                            ("document", "left"), ("domain", "left"),
                            ("snippet", "left")]:  # fmt: skip
        table.add_column(column, justify=justify, no_wrap=column != "snippet")
    for rank, match in enumerate(result.matches, start=1):
        cosine = match.scores.get(DENSE)
        table.add_row(
            str(rank),
            f"{match.score:.3f}",
            "" if cosine is None else f"{cosine:.3f}",
            match.document_id,
            match.domain,
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
