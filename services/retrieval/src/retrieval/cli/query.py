"""``retrieval query``: the best matches of one question, as a table or as JSON."""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Any

import typer

from retrieval.adapters.files.local_sources import source_or_none
from retrieval.cli.help_values import SEARCH_FLAGS
from retrieval.cli.runtime import (
    DOMAINS,
    SEARCHED_NAMESPACE,
    SECTION,
    SOURCE_PREFIX,
    VERBOSE,
    checked_query,
    console,
    failed,
    refused_when_invalid,
    run_here_or_served,
)

if TYPE_CHECKING:
    from retrieval.cli.served import ApplicationCalls, RetrievalCalls
    from retrieval.domain.models import RetrievalQuery

HEADINGS_SEARCHED = 20
"""Matches of a search for a section's name whose headings are offered in its place."""
NEAREST_SHOWN = 3


def query(
    text: str = typer.Argument(..., help="The question."),
    domain: list[str] = DOMAINS,
    top_k: int = typer.Option(5, "--top-k", "-k", help="Most matches to return."),
    threshold: float = typer.Option(
        0.0, "--threshold", "-t", help="Minimum cosine similarity (scores['dense'])."
    ),
    namespace: str | None = SEARCHED_NAMESPACE,
    source_prefix: str | None = SOURCE_PREFIX,
    section: str | None = SECTION,
    as_json: bool = typer.Option(
        False, "--json", help="Print the RetrievalResult as JSON, and nothing else, on stdout."
    ),
    **options: Any,
) -> None:
    """Answer one question from the knowledge base. The exit code is 1 if nothing matched,
    with the reason on stderr."""
    from retrieval.cli.tables import result_table
    from retrieval.domain.models import RetrievalOptions, validated

    with refused_when_invalid():
        chosen = validated(RetrievalOptions, **options)
    request, settings = checked_query(
        query=text,
        domains=tuple(domain),
        top_k=top_k,
        confidence_threshold=threshold,
        namespace=namespace,
        source_prefix=source_or_none(source_prefix),
        section=section,
        options=chosen,
    )

    async def work(app: ApplicationCalls) -> None:
        result = await app.retrieval.retrieve_query(request)
        if as_json:
            typer.echo(result.model_dump_json())
        elif result.matches:
            console.print(result_table(result, f"“{text}”", every_stage=VERBOSE.get()))
        if not result.matches:
            failed(await why_nothing_matched(app.retrieval, request, result.namespace))

    run_here_or_served(work, settings, read_only=True)


async def why_nothing_matched(
    retrieval: RetrievalCalls, request: RetrievalQuery, namespace: str
) -> str:
    """One line: what the search that found nothing was limited to; for a section, the
    headings nearest to it among those a search for its name finds."""
    if request.section is None:
        return f"nothing in namespace {namespace!r} matched the question and its filters"
    found = await retrieval.retrieve_query(
        request.model_copy(
            update={"query": request.section, "section": None, "top_k": HEADINGS_SEARCHED}
        )
    )
    headings = nearest(request.section, {match.section for match in found.matches})
    missing = f"no section is named {request.section!r} in namespace {namespace!r}"
    if not headings:
        return f"{missing}, and no heading is near it"
    return f"{missing}; the nearest headings: " + ", ".join(repr(h) for h in headings)


def nearest(section: str, headings: Iterable[str]) -> list[str]:
    """The ``NEAREST_SHOWN`` headings closest to ``section``: those that end with it first
    (a heading path given without its parents), then by likeness."""
    wanted = section.casefold()

    def closeness(heading: str) -> tuple[bool, float]:
        given = heading.casefold()
        return given.endswith(wanted), SequenceMatcher(None, wanted, given).ratio()

    return sorted((h for h in headings if h), key=closeness, reverse=True)[:NEAREST_SHOWN]


def option_parameter(name: str, annotation: Any, description: str) -> inspect.Parameter:
    """The flag of one of the search options: ``--fetch-k``, ``--rerank/--no-rerank`` for a
    switch; unset, it leaves the option to the settings."""
    flag = name.replace("_", "-")
    switch = (f"--{flag}/--no-{flag}",) if annotation is bool else ()
    help_text = f"{description.removesuffix('.')} [settings]."
    return inspect.Parameter(
        name,
        inspect.Parameter.KEYWORD_ONLY,
        default=typer.Option(None, *switch, help=help_text),
        annotation=annotation | None,
    )


def with_option_flags(
    command: inspect.Signature, options: Iterable[tuple[str, Any, str]]
) -> inspect.Signature:
    """``command`` with a flag per option in place of its ``**options``, before ``--json``."""
    *fixed, as_json, _ = command.parameters.values()
    flags = [option_parameter(*option) for option in options]
    return command.replace(
        parameters=[*fixed, *flags, as_json.replace(kind=inspect.Parameter.KEYWORD_ONLY)]
    )


query.__signature__ = with_option_flags(inspect.signature(query, eval_str=True), SEARCH_FLAGS)
