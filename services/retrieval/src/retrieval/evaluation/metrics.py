"""Ranking metrics with trec_eval's definitions, and the summaries built on them.

A ranking is a sequence of document ids, best first, without repeats; qrels map a
document id to a graded judgement, and a grade above zero means relevant. The
definitions are trec_eval's (and so pytrec_eval's and BEIR's):

- hit@k: 1 when a relevant document is among the first k, else 0.
- all@k: 1 when every relevant document is among the first k, else 0 (both@k for a question
  that needs two documents, as multi-hop benchmarks report it; not a trec_eval measure).
- recall@k: relevant documents among the first k / relevant documents judged.
- precision@k: relevant documents among the first k / k (a shorter ranking is not excused).
- reciprocal rank: 1 / rank of the first relevant document, 0 when none was retrieved.
- nDCG@k: DCG sums grade / log2(rank + 1) over the first k ranks (linear gain); the ideal
  DCG sorts every judged grade descending and cuts it at k.

A query without a relevant judgement scores 0 on every one of them, as in trec_eval.
Scored runs are ordered the way trec_eval orders them: score descending, ties broken by
document id descending.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from retrieval.evaluation.percentiles import percentile

Qrels = Mapping[str, int]
Ranking = Sequence[str]
Run = Mapping[str, Mapping[str, float]]
Measure = Callable[[Ranking, Qrels], float]
T = TypeVar("T")


def relevant_ids(qrels: Qrels) -> set[str]:
    return {doc for doc, grade in qrels.items() if grade > 0}


def first_relevant_rank(ranking: Ranking, qrels: Qrels) -> int | None:
    """One-based rank of the first relevant document, or None when none was retrieved."""
    return next((rank for rank, doc in enumerate(ranking, start=1) if qrels.get(doc, 0) > 0), None)


def relevant_in_top(ranking: Ranking, qrels: Qrels, k: int) -> int:
    return sum(1 for doc in ranking[:k] if qrels.get(doc, 0) > 0)


def hit_at(ranking: Ranking, qrels: Qrels, k: int) -> float:
    return 1.0 if relevant_in_top(ranking, qrels, k) else 0.0


def all_relevant_at(ranking: Ranking, qrels: Qrels, k: int) -> float:
    relevant = relevant_ids(qrels)
    return 1.0 if relevant and relevant <= set(ranking[:k]) else 0.0


def recall_at(ranking: Ranking, qrels: Qrels, k: int) -> float:
    judged = len(relevant_ids(qrels))
    return relevant_in_top(ranking, qrels, k) / judged if judged else 0.0


def precision_at(ranking: Ranking, qrels: Qrels, k: int) -> float:
    return relevant_in_top(ranking, qrels, k) / k


def reciprocal_rank(ranking: Ranking, qrels: Qrels) -> float:
    rank = first_relevant_rank(ranking, qrels)
    return 1.0 / rank if rank is not None else 0.0


def dcg(grades: Iterable[float]) -> float:
    return sum(grade / math.log2(rank + 1) for rank, grade in enumerate(grades, start=1))


def ndcg_at(ranking: Ranking, qrels: Qrels, k: int) -> float:
    ideal = dcg(sorted((g for g in qrels.values() if g > 0), reverse=True)[:k])
    if ideal == 0:
        return 0.0
    return dcg(qrels.get(doc, 0) for doc in ranking[:k]) / ideal


def citation_precision(cited_documents: Sequence[str], qrels: Qrels) -> float:
    """Share of the passages an answer cites whose document is relevant, given the document
    of each cited passage (a document cited through two passages counts twice); 0 when it
    cites none, as precision does not excuse an empty ranking."""
    if not cited_documents:
        return 0.0
    return sum(1 for doc in cited_documents if qrels.get(doc, 0) > 0) / len(cited_documents)


def rank_by_score(scores: Mapping[str, float]) -> list[str]:
    """Document ids in trec_eval's order: score descending, then id descending."""
    return sorted(scores, key=lambda doc: (scores[doc], doc), reverse=True)


def mean(values: Iterable[float]) -> float | None:
    """Arithmetic mean, or None for no values (a metric that does not apply)."""
    collected = list(values)
    return sum(collected) / len(collected) if collected else None


def mean_over_queries(run: Run, qrels: Mapping[str, Qrels], measure: Measure) -> float:
    """Mean of ``measure`` over every judged query; a query missing from the run scores 0."""
    if not qrels:
        raise ValueError("no judged queries to average over")
    return sum(measure(rank_by_score(run.get(q, {})), judged) for q, judged in qrels.items()) / len(
        qrels
    )


def group_by(items: Iterable[T], keys: Callable[[T], Iterable[str]]) -> dict[str, list[T]]:
    """Items under each of their keys (an item with two keys is in both groups), keys sorted."""
    groups: defaultdict[str, list[T]] = defaultdict(list)
    for item in items:
        for key in dict.fromkeys(keys(item)):
            groups[key].append(item)
    return dict(sorted(groups.items()))


@dataclass(frozen=True)
class ScoredMatch:
    """A document a query returned, its score, the group it is reported under and its label."""

    group: str
    score: float
    relevant: bool


@dataclass(frozen=True)
class ScoreSummary:
    count: int
    min: float | None
    p50: float | None
    max: float | None

    @classmethod
    def of(cls, scores: Sequence[float]) -> ScoreSummary:
        if not scores:
            return cls(0, None, None, None)
        return cls(len(scores), min(scores), percentile(scores, 50), max(scores))


@dataclass(frozen=True)
class ThresholdChoice:
    """A cut ``score >= threshold`` and how it classifies the matches it was chosen on."""

    threshold: float
    precision: float
    recall: float
    f1: float


@dataclass(frozen=True)
class ThresholdFigures:
    relevant: ScoreSummary
    non_relevant: ScoreSummary
    suggestion: ThresholdChoice | None


def suggest_threshold(
    relevant: Sequence[float], non_relevant: Sequence[float]
) -> ThresholdChoice | None:
    """The cut with the highest F1 at telling relevant from non-relevant matches.

    Every distinct score is tried as the lowest score kept; among equal F1 the lowest
    cut wins (it keeps the most relevant matches). The threshold is placed midway
    between the lowest score kept and the highest score dropped, so it classifies the
    observed matches exactly as the chosen cut and leaves a margin on both sides.
    None when there is no relevant match to keep.
    """
    if not relevant:
        return None
    labelled = sorted([(s, True) for s in relevant] + [(s, False) for s in non_relevant])[::-1]
    best: ThresholdChoice | None = None
    kept_relevant = kept = 0
    for position, (score, is_relevant) in enumerate(labelled):
        kept += 1
        kept_relevant += is_relevant
        following = labelled[position + 1][0] if position + 1 < len(labelled) else None
        if following == score:
            continue
        precision, recall = kept_relevant / kept, kept_relevant / len(relevant)
        f1 = 2 * precision * recall / (precision + recall) if kept_relevant else 0.0
        if best is None or f1 >= best.f1:
            midpoint = score if following is None else (score + following) / 2
            cut = score if following is None or midpoint <= following else midpoint
            best = ThresholdChoice(cut, precision, recall, f1)
    return best


def threshold_report(matches: Iterable[ScoredMatch], overall: str) -> dict[str, ThresholdFigures]:
    """Score distributions of relevant and non-relevant matches, and a suggested threshold,
    for each group and for all matches together under the key ``overall``."""
    collected = list(matches)
    groups = {overall: collected, **group_by(collected, lambda match: [match.group])}
    report = {}
    for name, members in groups.items():
        relevant = [m.score for m in members if m.relevant]
        non_relevant = [m.score for m in members if not m.relevant]
        report[name] = ThresholdFigures(
            ScoreSummary.of(relevant),
            ScoreSummary.of(non_relevant),
            suggest_threshold(relevant, non_relevant),
        )
    return report
