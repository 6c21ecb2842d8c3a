"""``retrieval query``: the best matches of one question, as a table or as JSON."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from retrieval.adapters.files.local_sources import source_or_none
from retrieval.cli.runtime import (
    VERBOSE,
    checked_query,
    console,
    json_errors,
    refused_when_invalid,
    run_here_or_served,
)
from retrieval.cli.tables import result_table
from retrieval.domain.models import (
    FusionMethod,
    RetrievalOptions,
    SearchMode,
    validated,
)

if TYPE_CHECKING:
    from retrieval.container import Application


def query(
    text: str = typer.Argument(..., help="The question."),
    domain: list[str] = typer.Option([], "--domain", "-d", help="Restrict to a domain (repeat)."),
    top_k: int = typer.Option(5, "--top-k", "-k", help="Most matches to return."),
    threshold: float = typer.Option(
        0.0, "--threshold", "-t", help="Minimum cosine similarity (scores['dense'])."
    ),
    namespace: str | None = typer.Option(None, "--namespace", "-n", help="Namespace to search."),
    source_prefix: str | None = typer.Option(
        None, "--source-prefix", help="Only documents from this path or URL, or below it."
    ),
    section: str | None = typer.Option(
        None, "--section", help="Only chunks of this section (heading path below the title)."
    ),
    mode: SearchMode | None = typer.Option(None, help="hybrid, dense or keyword [settings]."),
    fusion: FusionMethod | None = typer.Option(None, help="How hybrid results fuse [settings]."),
    dense_weight: float | None = typer.Option(None, help="Dense weight in fusion [settings]."),
    keyword_weight: float | None = typer.Option(None, help="Keyword weight [settings]."),
    fetch_k: int | None = typer.Option(None, help="Candidates per search [settings]."),
    mmr_lambda: float | None = typer.Option(
        None, help="MMR: 1 relevance only, lower is more diverse [settings]."
    ),
    max_per_document: int | None = typer.Option(
        None, help="Most chunks of one document, 0 no cap [settings]."
    ),
    rerank: bool | None = typer.Option(
        None, "--rerank/--no-rerank", help="Reorder with the reranking model [settings]."
    ),
    redundancy_threshold: float | None = typer.Option(
        None, help="Drop a chunk this close (cosine) to a better one, 1 keeps all [settings]."
    ),
    neighbours: int | None = typer.Option(
        None, help="Widen each match to this many chunks either side, 0 off [settings]."
    ),
    rewrite: bool | None = typer.Option(
        None, "--rewrite/--no-rewrite", help="Rewrite a weak query and search again [settings]."
    ),
    rewrite_threshold: float | None = typer.Option(
        None, help="Best cosine under which a query is rewritten [settings]."
    ),
    llm_filter: bool | None = typer.Option(
        None,
        "--llm-filter/--no-llm-filter",
        help="Drop the candidates the language model judges irrelevant [settings].",
    ),
    second_hop: bool | None = typer.Option(
        None,
        "--second-hop/--no-second-hop",
        help="Follow the names the best matches mention to their documents [settings].",
    ),
    graph: bool | None = typer.Option(
        None,
        "--graph/--no-graph",
        help="Search the knowledge graph beside dense and keyword [settings].",
    ),
    graph_hops: int | None = typer.Option(
        None, help="Graph hops: 1 or 2 (also what the first hits mention) [settings]."
    ),
    graph_weight: float | None = typer.Option(
        None, help="Weight of the graph search in fusion, 0-10 [settings]."
    ),
    as_json: bool = typer.Option(
        False, "--json", help="Print the RetrievalResult as JSON, and nothing else, on stdout."
    ),
) -> None:
    """Answer one question from the knowledge base."""
    with refused_when_invalid():
        options = validated(
            RetrievalOptions,
            mode=mode,
            fusion=fusion,
            dense_weight=dense_weight,
            keyword_weight=keyword_weight,
            fetch_k=fetch_k,
            mmr_lambda=mmr_lambda,
            max_per_document=max_per_document,
            rerank=rerank,
            redundancy_threshold=redundancy_threshold,
            neighbours=neighbours,
            rewrite=rewrite,
            rewrite_threshold=rewrite_threshold,
            llm_filter=llm_filter,
            second_hop=second_hop,
            graph=graph,
            graph_hops=graph_hops,
            graph_weight=graph_weight,
        )
    request, settings = checked_query(
        query=text,
        domains=tuple(domain),
        top_k=top_k,
        confidence_threshold=threshold,
        namespace=namespace or None,
        source_prefix=source_or_none(source_prefix),
        section=section,
        options=options,
    )

    async def work(app: Application) -> None:
        with json_errors(as_json):
            result = await app.retrieval.retrieve_query(request)
        if as_json:
            typer.echo(result.model_dump_json())
        else:
            console.print(result_table(result, f"“{text}”", every_stage=VERBOSE.get()))

    run_here_or_served(work, settings)
