"""Ranking metrics: hand-computed cases, and agreement with pytrec_eval on random runs."""

from __future__ import annotations

import math

import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.evaluation.metrics import (
    ScoredMatch,
    citation_precision,
    first_relevant_rank,
    group_by,
    hit_at,
    mean,
    mean_over_queries,
    ndcg_at,
    precision_at,
    rank_by_score,
    recall_at,
    reciprocal_rank,
    suggest_threshold,
    threshold_report,
)
from retrieval.evaluation.percentiles import summary

RANKING = ["a", "b", "c"]
QRELS = {"b": 2, "c": 1, "d": 1, "e": 0}


def test_rank_based_metrics_by_hand() -> None:
    assert first_relevant_rank(RANKING, QRELS) == 2
    assert hit_at(RANKING, QRELS, 1) == 0.0
    assert hit_at(RANKING, QRELS, 2) == 1.0
    assert recall_at(RANKING, QRELS, 2) == pytest.approx(1 / 3)
    assert recall_at(RANKING, QRELS, 3) == pytest.approx(2 / 3)
    assert precision_at(RANKING, QRELS, 5) == pytest.approx(2 / 5)
    assert reciprocal_rank(RANKING, QRELS) == 0.5


def test_ndcg_uses_linear_gain_and_the_ideal_from_the_qrels() -> None:
    found = 2 / math.log2(3) + 1 / math.log2(4)
    ideal = 2 + 1 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at(RANKING, QRELS, 3) == pytest.approx(found / ideal)
    assert ndcg_at(["b", "c", "d"], QRELS, 3) == pytest.approx(1.0)
    assert ndcg_at(["b"], QRELS, 1) == pytest.approx(1.0)


def test_a_query_without_relevant_judgements_scores_zero() -> None:
    judged = {"x": 0}
    assert first_relevant_rank(["x"], judged) is None
    assert recall_at(["x"], judged, 10) == 0.0
    assert ndcg_at(["x"], judged, 10) == 0.0
    assert reciprocal_rank(["x"], judged) == 0.0


def test_citation_precision_counts_each_cited_passage() -> None:
    assert citation_precision(["b", "a"], QRELS) == 0.5
    assert citation_precision(["b", "b", "e"], QRELS) == pytest.approx(2 / 3), "grade 0 is not"
    assert citation_precision([], QRELS) == 0.0, "an answer citing nothing is not excused"


@given(
    cited=st.lists(st.sampled_from(["a", "b", "c", "d", "e", "z"]), max_size=8),
    extra=st.lists(st.sampled_from(["b", "c", "d"]), min_size=1, max_size=4),
)
def test_citation_precision_is_a_share_that_relevant_citations_raise(
    cited: list[str], extra: list[str]
) -> None:
    precision = citation_precision(cited, QRELS)
    relevant = sum(QRELS.get(doc, 0) > 0 for doc in cited)
    assert 0.0 <= precision <= 1.0
    assert precision * len(cited) == pytest.approx(relevant)
    assert citation_precision(cited + extra, QRELS) >= precision
    assert citation_precision([*cited, "z"], QRELS) <= precision, "an irrelevant one lowers it"


def test_ties_are_broken_by_document_id_descending() -> None:
    assert rank_by_score({"a": 0.5, "c": 0.5, "b": 0.9, "d": 0.1}) == ["b", "c", "a", "d"]


def test_mean_over_queries_counts_a_missing_query_as_zero() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 0.9, "z": 0.5}, "q3": {"b": 1.0}}
    assert mean_over_queries(run, qrels, reciprocal_rank) == 0.5


def test_mean_and_groups() -> None:
    assert mean([]) is None
    assert mean([1.0, 2.0]) == 1.5
    rows = [("s1", ["x", "y"]), ("s2", ["y"]), ("s3", ["y", "y"])]
    assert group_by(rows, lambda row: row[1]) == {
        "x": [rows[0]],
        "y": [rows[0], rows[1], rows[2]],
    }


def test_latency_percentiles_interpolate() -> None:
    figures = summary([float(n) for n in range(1, 101)])
    assert figures == {"p50": pytest.approx(50.5), "p95": pytest.approx(95.05), "max": 100.0}
    assert summary([]) == {"p50": 0.0, "p95": 0.0, "max": 0.0}


def test_suggested_threshold_maximises_f1_and_sits_between_kept_and_dropped() -> None:
    choice = suggest_threshold([0.9, 0.8], [0.85, 0.7])
    assert choice is not None
    assert choice.threshold == pytest.approx(0.75)
    assert (choice.precision, choice.recall) == (pytest.approx(2 / 3), 1.0)
    assert choice.f1 == pytest.approx(0.8)
    assert suggest_threshold([], [0.5]) is None
    separable = suggest_threshold([0.9, 0.8], [0.6, 0.5])
    assert separable is not None
    assert (separable.threshold, separable.f1) == (pytest.approx(0.7), 1.0)


def test_threshold_report_per_group_and_overall() -> None:
    matches = [
        ScoredMatch("pests", 0.9, True),
        ScoredMatch("pests", 0.6, False),
        ScoredMatch("weather", 0.8, True),
        ScoredMatch("weather", 0.85, False),
    ]
    report = threshold_report(matches, overall="all")
    assert list(report) == ["all", "pests", "weather"]
    assert report["all"].relevant.count == 2
    assert report["all"].non_relevant.max == 0.85
    assert report["pests"].suggestion is not None
    assert report["pests"].suggestion.threshold == pytest.approx(0.75)
    assert report["weather"].non_relevant.min == 0.85


scores = st.lists(st.floats(0, 1, allow_nan=False), max_size=12)


@given(relevant=scores, non_relevant=scores)
def test_suggested_threshold_reproduces_its_figures_and_no_cut_beats_it(
    relevant: list[float], non_relevant: list[float]
) -> None:
    choice = suggest_threshold(relevant, non_relevant)
    if not relevant:
        assert choice is None
        return
    assert choice is not None
    kept = [s for s in relevant if s >= choice.threshold]
    kept_wrong = [s for s in non_relevant if s >= choice.threshold]
    assert len(kept) / (len(kept) + len(kept_wrong)) == pytest.approx(choice.precision)
    assert len(kept) / len(relevant) == pytest.approx(choice.recall)
    for cut in set(relevant) | set(non_relevant):
        hits = sum(s >= cut for s in relevant)
        retained = hits + sum(s >= cut for s in non_relevant)
        f1 = 2 * hits / (retained + len(relevant))
        assert f1 <= choice.f1 + 1e-12


DOCS = [f"d{n:02d}" for n in range(25)]
qrels_strategy = st.dictionaries(
    st.sampled_from(DOCS), st.integers(0, 3), min_size=1, max_size=10
).filter(lambda judged: any(grade > 0 for grade in judged.values()))
run_strategy = st.dictionaries(
    st.sampled_from(DOCS), st.integers(0, 8).map(lambda n: n / 8), min_size=1, max_size=25
)


@settings(max_examples=200, deadline=None)
@given(
    queries=st.dictionaries(
        st.sampled_from(["q1", "q2", "q3", "q4"]),
        st.tuples(qrels_strategy, run_strategy),
        min_size=1,
    )
)
def test_agrees_with_pytrec_eval(queries: dict) -> None:
    qrels = {q: judged for q, (judged, _) in queries.items()}
    run = {q: scored for q, (_, scored) in queries.items()}
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, {"ndcg_cut.10", "recall.100", "P.5", "recip_rank"}
    )
    expected = evaluator.evaluate(run)
    for query, figures in expected.items():
        ranking = rank_by_score(run[query])
        assert ndcg_at(ranking, qrels[query], 10) == pytest.approx(figures["ndcg_cut_10"])
        assert recall_at(ranking, qrels[query], 100) == pytest.approx(figures["recall_100"])
        assert precision_at(ranking, qrels[query], 5) == pytest.approx(figures["P_5"])
        assert reciprocal_rank(ranking, qrels[query]) == pytest.approx(figures["recip_rank"])
    mean_ndcg = sum(figures["ndcg_cut_10"] for figures in expected.values()) / len(expected)
    assert mean_over_queries(run, qrels, lambda r, j: ndcg_at(r, j, 10)) == pytest.approx(mean_ndcg)
