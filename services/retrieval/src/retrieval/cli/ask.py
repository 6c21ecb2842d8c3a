"""``retrieval ask``: an answer written by the configured language model from retrieved
context, printed as the model writes it, then its citations; with ``--json``, one document
once the answer is whole."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from retrieval.adapters.files.local_sources import source_or_none
from retrieval.cli.runtime import (
    DOMAINS,
    SEARCHED_NAMESPACE,
    SECTION,
    SOURCE_PREFIX,
    checked_query,
    console,
    run_here_or_served,
)

if TYPE_CHECKING:
    from retrieval.cli.served import ApplicationCalls
    from retrieval.domain.answers import Answer, AnswerEvent


def citations_json(answer: Answer) -> dict:
    return {
        "answer": answer.text,
        "answered": answer.answered,
        "confidence": answer.confidence,
        "model": answer.model,
        "citations": [
            {
                "number": c.number,
                "chunk_id": c.chunk_id,
                "document_id": c.document_id,
                "title": c.title,
                "source": c.source,
                "section": c.section,
                "pages": list(c.pages),
            }
            for c in answer.citations
        ],
        "unknown_citations": list(answer.unknown_citations),
    }


async def printed(events: AsyncGenerator[AnswerEvent, None]) -> Answer:
    """The answer ``events`` end with, its text printed as it comes; the line it ends is
    ended, also when the stream fails."""
    from retrieval.domain.answers import AnswerDelta
    from retrieval.errors import BackendError

    printed_any = False
    try:
        async with aclosing(events):
            async for event in events:
                if not isinstance(event, AnswerDelta):
                    return event.answer
                console.out(event.text, end="", highlight=False)
                printed_any = True
    finally:
        if printed_any:
            console.out("")
    raise BackendError("the answer's stream ended before the answer")


def ask(
    question: str = typer.Argument(..., help="The question."),
    domain: list[str] = DOMAINS,
    top_k: int = typer.Option(8, "--top-k", "-k", help="Chunks retrieved for the context."),
    namespace: str | None = SEARCHED_NAMESPACE,
    source_prefix: str | None = SOURCE_PREFIX,
    section: str | None = SECTION,
    as_json: bool = typer.Option(
        False, "--json", help="Print answer and citations as JSON, and nothing else, on stdout."
    ),
) -> None:
    """Answer a question from the knowledge base with the configured language model
    (RETRIEVAL_LLM_*), citing the chunks it used."""
    query, settings = checked_query(
        query=question,
        domains=tuple(domain),
        top_k=top_k,
        namespace=namespace,
        source_prefix=source_or_none(source_prefix),
        section=section,
    )

    async def work(app: ApplicationCalls) -> Answer:
        if as_json:
            return await app.answers.answer(query)
        return await printed(app.answers.stream(query))

    from retrieval.cli.sources import located

    answer = run_here_or_served(work, settings, read_only=True)
    if as_json:
        typer.echo(json.dumps(citations_json(answer)))
        return
    if not answer.answered:
        console.print("[yellow]no context found for this question: the model was not asked[/]")
        raise typer.Exit(code=1)
    console.print()
    for citation in answer.citations:
        where = located(citation.source, citation.chunk_id, citation.section, citation.pages)
        console.print(f"[{citation.number}] {escape(citation.title)} [dim]{escape(where)}[/dim]")
    if answer.unknown_citations:
        unknown = ", ".join(str(number) for number in answer.unknown_citations)
        console.print(f"[red]cited but not in the context: {unknown}[/red]")
    console.print(
        f"confidence {answer.confidence:.2f} · {answer.model} · "
        f"generation {answer.generation_ms:.0f} ms"
    )
