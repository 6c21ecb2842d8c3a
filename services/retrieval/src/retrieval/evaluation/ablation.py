"""Each retrieval stage on and off over the same namespace and queries, in one run.

Every query is asked under every variant, the variants' order rotating from one query to
the next so that a busy machine slows them alike; the figures of each variant come from the
same judgements. ``reports/ablation.json`` keeps the latest ablation of each benchmark.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from pydantic import Field
from rich.table import Table

from retrieval.domain.models import (
    Frozen,
    RetrievalOptions,
    RetrievalQuery,
    RetrievalResult,
    SearchMode,
)
from retrieval.domain.ranking.fusion import FusionMethod
from retrieval.evaluation.percentiles import summary
from retrieval.service.retrieval.retrieval_service import RetrievalService
from retrieval.settings import RerankBackend, Settings

ABLATION_FILE = "ablation.json"
DEFAULT_VARIANT = "default"
DENSE_VARIANT = "dense only"
VARIANTS: dict[str, RetrievalOptions] = {
    DEFAULT_VARIANT: RetrievalOptions(),
    DENSE_VARIANT: RetrievalOptions(mode=SearchMode.DENSE),
    "keyword only": RetrievalOptions(mode=SearchMode.KEYWORD),
    "hybrid, rrf": RetrievalOptions(mode=SearchMode.HYBRID, fusion=FusionMethod.RRF),
    "hybrid, weighted": RetrievalOptions(mode=SearchMode.HYBRID, fusion=FusionMethod.WEIGHTED),
    "hybrid, dbsf": RetrievalOptions(mode=SearchMode.HYBRID, fusion=FusionMethod.DBSF),
    "mmr 0.7": RetrievalOptions(mmr_lambda=0.7),
    "one chunk per document": RetrievalOptions(max_per_document=1),
    "no near-duplicates (0.95)": RetrievalOptions(redundancy_threshold=0.95),
    "rewrite weak queries": RetrievalOptions(rewrite=True),
    "no second hop": RetrievalOptions(second_hop=False),
    "graph search": RetrievalOptions(graph=True),
    "graph search, 1 hop": RetrievalOptions(graph=True, graph_hops=1),
    "graph search, no second hop": RetrievalOptions(graph=True, second_hop=False),
}
"""The settings' defaults, then one switch changed at a time."""
RERANK_VARIANT = "rerank"
LLM_FILTER_VARIANT = "llm relevance filter"
REPEAT_VARIANT = "default, asked again (result cache)"
"""The default's request asked a second time right after it: what the result cache saves."""


def ablation_variants(settings: Settings) -> dict[str, RetrievalOptions]:
    """``VARIANTS``, reranking when a reranker is configured and the language model's
    relevance filter when a model is (without one either row would only repeat the default,
    flagged degraded), and the default asked again when results are cached (without a cache
    the row would only repeat the default)."""
    variants = dict(VARIANTS)
    if settings.rerank_backend is not RerankBackend.NONE:
        variants[RERANK_VARIANT] = RetrievalOptions(rerank=True)
    if settings.llm_base_url is not None:
        variants[LLM_FILTER_VARIANT] = RetrievalOptions(llm_filter=True)
    if settings.result_cache_entries > 0:
        variants[REPEAT_VARIANT] = VARIANTS[DEFAULT_VARIANT]
    return variants


Progress = Callable[[int, int], None]


class VariantFigures(Frozen):
    """What one variant scored; a figure the benchmark cannot measure is None."""

    options: dict[str, object] = Field(description="The switches the variant sets.")
    ndcg_at_10: float | None
    recall_at_100: float | None
    hit_at_5: float
    both_at_10: float | None = Field(
        default=None, description="Share of queries with every relevant document in 10."
    )
    mrr: float | None
    p50_ms: float = Field(description="retrieve() wall-clock time as the service timed it.")
    p95_ms: float


def latency(results: Sequence[RetrievalResult]) -> dict[str, float]:
    return summary([result.timings.total_ms for result in results])


async def ask_every_variant(
    retrieval: RetrievalService,
    requests: Sequence[RetrievalQuery],
    variants: Mapping[str, RetrievalOptions],
    progress: Progress | None = None,
) -> dict[str, list[RetrievalResult]]:
    """Each request's result under each variant, in request order; ``REPEAT_VARIANT`` asks
    the default's request again right after it."""
    names = [name for name in variants if name != REPEAT_VARIANT]
    results: dict[str, list[RetrievalResult]] = {name: [] for name in variants}
    for position, request in enumerate(requests):
        turn = position % len(names)
        for name in names[turn:] + names[:turn]:
            asked = request.model_copy(update={"options": variants[name]})
            results[name].append(await retrieval.retrieve_query(asked))
            if name == DEFAULT_VARIANT and REPEAT_VARIANT in variants:
                results[REPEAT_VARIANT].append(await retrieval.retrieve_query(asked))
        if progress is not None:
            progress(position + 1, len(requests))
    return results


def write_ablation(path: Path, benchmark: str, figures: Mapping[str, VariantFigures]) -> None:
    """Replace ``benchmark``'s entry of the ablation file, keeping the others."""
    ablation = json.loads(path.read_text()) if path.exists() else {}
    ablation[benchmark] = {name: f.model_dump(mode="json") for name, f in figures.items()}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(ablation, indent=2, sort_keys=True))


def cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


COLUMNS = ("nDCG@10", "Recall@100", "hit@5", "both@10", "MRR", "p50 ms", "p95 ms")


def ablation_rows(figures: Mapping[str, VariantFigures]) -> list[list[str]]:
    return [
        [name, cell(f.ndcg_at_10), cell(f.recall_at_100), cell(f.hit_at_5), cell(f.both_at_10),
         cell(f.mrr), f"{f.p50_ms:.1f}", f"{f.p95_ms:.1f}"]
        for name, f in figures.items()
    ]  # fmt: skip


def ablation_table(benchmark: str, figures: Mapping[str, VariantFigures]) -> Table:
    table = Table(title=f"ablation, {benchmark}", title_justify="left")
    table.add_column("variant")
    for column in COLUMNS:
        table.add_column(column, justify="right")
    for row in ablation_rows(figures):
        table.add_row(*row)
    return table


def latency_ratio(figures: Mapping[str, VariantFigures]) -> str:
    """The default settings' p95 over dense-only p95, measured in the same run."""
    default, dense = figures[DEFAULT_VARIANT], figures[DENSE_VARIANT]
    return (
        f"latency: default p95 {default.p95_ms:.1f} ms / dense-only p95 {dense.p95_ms:.1f} ms "
        f"= {default.p95_ms / dense.p95_ms:.2f}x"
    )
