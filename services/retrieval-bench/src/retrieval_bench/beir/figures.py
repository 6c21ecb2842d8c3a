"""What a BEIR run scored, over all its judged queries and over the queries of each type.

Besides nDCG@10 and Recall@100, both@5 and both@10: the share of queries with every relevant
document in the first 5 or 10 (a multi-hop question is answered only from all its documents).
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.table import Table

from retrieval.domain.models import Frozen
from retrieval.evaluation.metrics import (
    Qrels,
    Run,
    all_relevant_at,
    group_by,
    mean_over_queries,
    ndcg_at,
    recall_at,
)


class RankingFigures(Frozen):
    queries: int
    ndcg_at_10: float
    recall_at_100: float
    both_at_5: float
    both_at_10: float


def ranking_figures(run: Run, qrels: Mapping[str, Qrels]) -> RankingFigures:
    return RankingFigures(
        queries=len(qrels),
        ndcg_at_10=mean_over_queries(run, qrels, lambda r, q: ndcg_at(r, q, 10)),
        recall_at_100=mean_over_queries(run, qrels, lambda r, q: recall_at(r, q, 100)),
        both_at_5=mean_over_queries(run, qrels, lambda r, q: all_relevant_at(r, q, 5)),
        both_at_10=mean_over_queries(run, qrels, lambda r, q: all_relevant_at(r, q, 10)),
    )


def figures_by_type(
    run: Run, qrels: Mapping[str, Qrels], types: Mapping[str, str]
) -> dict[str, RankingFigures]:
    """The figures of the judged queries of each type, types sorted; empty when none has one."""
    typed = group_by((qid for qid in qrels if qid in types), lambda qid: [types[qid]])
    return {
        kind: ranking_figures(run, {qid: qrels[qid] for qid in queries})
        for kind, queries in typed.items()
    }


def type_table(benchmark: str, by_type: Mapping[str, RankingFigures]) -> Table:
    table = Table(title=f"{benchmark}, by query type", title_justify="left")
    table.add_column("type")
    for column in ("queries", "nDCG@10", "Recall@100", "both@5", "both@10"):
        table.add_column(column, justify="right")
    for kind, f in by_type.items():
        table.add_row(
            kind, str(f.queries), f"{f.ndcg_at_10:.4f}", f"{f.recall_at_100:.4f}",
            f"{f.both_at_5:.4f}", f"{f.both_at_10:.4f}",
        )  # fmt: skip
    return table
