"""Fusion of ranked lists: hand-computed figures per method, and properties on random lists."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.domain.keywords import KeywordMatch
from retrieval.domain.ranking import Candidate, FusionMethod, first_occurrences, fuse
from retrieval.domain.vectors import QueryMatch

SOURCES = ["dense", "keyword", "sparse"]
ids = st.sampled_from(list("abcdefg"))
scores = st.one_of(st.integers(-3, 3).map(float), st.floats(-100, 100, allow_nan=False))
ranked_lists = st.lists(st.tuples(ids, scores), max_size=8)
source_lists = st.dictionaries(st.sampled_from(SOURCES), ranked_lists, max_size=3)
methods = st.sampled_from(FusionMethod)
weight_maps = st.dictionaries(st.sampled_from(SOURCES), st.floats(0, 3), max_size=3)


def ranking(fused: list[Candidate]) -> list[tuple[str, float]]:
    return [(item.chunk_id, item.score) for item in fused]


def assert_ranking_close(fused: list[Candidate], expected: list[tuple[str, float]]) -> None:
    assert [item.chunk_id for item in fused] == [item_id for item_id, _ in expected]
    assert [item.score for item in fused] == pytest.approx([score for _, score in expected])


def test_first_occurrences_keeps_the_best_ranked_entry_of_each_id_in_order() -> None:
    ranked = [("a", 3.0), ("b", 2.0), ("a", 9.0), ("c", 1.0), ("b", 0.5)]
    assert first_occurrences(ranked) == (["a", "b", "c"], [3.0, 2.0, 1.0])
    assert first_occurrences([]) == ([], [])


def test_rrf_by_hand() -> None:
    lists = {"dense": [("a", 0.9), ("b", 0.8), ("c", 0.7)], "keyword": [("c", 9.0), ("a", 5.0)]}
    assert_ranking_close(
        fuse(lists, FusionMethod.RRF),
        [("a", 1 / 61 + 1 / 62), ("c", 1 / 63 + 1 / 61), ("b", 1 / 62)],
    )


def test_a_label_puts_the_fused_score_beside_the_raw_ones() -> None:
    lists = {"dense": [("a", 0.9), ("b", 0.8)], "keyword": [("a", 5.0)]}
    plain = fuse(lists, FusionMethod.RRF)
    labelled = fuse(lists, FusionMethod.RRF, label="fused")
    assert [item.scores for item in plain] == [{"dense": 0.9, "keyword": 5.0}, {"dense": 0.8}]
    assert [item.scores for item in labelled] == [
        {"dense": 0.9, "keyword": 5.0, "fused": pytest.approx(1 / 61 + 1 / 61)},
        {"dense": 0.8, "fused": pytest.approx(1 / 62)},
    ]
    assert ranking(labelled) == ranking(plain)


def test_rrf_weights_and_k_by_hand() -> None:
    lists = {"dense": [("a", 0.9), ("b", 0.8), ("c", 0.7)], "keyword": [("c", 9.0), ("a", 5.0)]}
    assert_ranking_close(
        fuse(lists, FusionMethod.RRF, weights={"keyword": 2.0}),
        [("c", 1 / 63 + 2 / 61), ("a", 1 / 61 + 2 / 62), ("b", 1 / 62)],
    )
    assert_ranking_close(
        fuse(lists, "rrf", rrf_k=1), [("a", 1 / 2 + 1 / 3), ("c", 1 / 4 + 1 / 2), ("b", 1 / 3)]
    )


def test_rrf_ranks_count_within_the_deduplicated_list() -> None:
    fused = fuse({"dense": [("a", 0.9), ("a", 0.8), ("b", 0.7)]}, FusionMethod.RRF)
    assert_ranking_close(fused, [("a", 1 / 61), ("b", 1 / 62)])


def test_weighted_min_max_by_hand() -> None:
    lists = {
        "dense": [("a", 0.75), ("b", 0.5), ("c", 0.25)],
        "keyword": [("c", 12.0), ("d", 4.0)],
    }
    assert ranking(fuse(lists, FusionMethod.WEIGHTED)) == [
        ("a", 1.0),
        ("c", 1.0),
        ("b", 0.5),
        ("d", 0.0),
    ]
    halved = fuse(lists, FusionMethod.WEIGHTED, weights={"keyword": 0.5})
    assert ranking(halved) == [("a", 1.0), ("b", 0.5), ("c", 0.5), ("d", 0.0)]


@pytest.mark.parametrize("method", [FusionMethod.WEIGHTED, FusionMethod.DBSF])
def test_a_list_of_equal_scores_normalises_to_one(method: FusionMethod) -> None:
    assert ranking(fuse({"dense": [("a", 0.3)]}, method)) == [("a", 1.0)]
    tied = fuse({"dense": [("b", 0.1), ("a", 0.1), ("c", 0.1)]}, method)
    assert ranking(tied) == [("a", 1.0), ("b", 1.0), ("c", 1.0)]


def test_dbsf_by_hand() -> None:
    # mean 2, population std sqrt(2/3): normalised = 0.5 + (score - 2) / (6 * sqrt(2/3)).
    step = 1 / math.sqrt(24)
    lists = {"dense": [("a", 3.0), ("b", 2.0), ("c", 1.0)], "keyword": [("c", 5.0)]}
    assert_ranking_close(
        fuse(lists, FusionMethod.DBSF), [("c", 1.0 + 0.5 - step), ("a", 0.5 + step), ("b", 0.5)]
    )


def test_dbsf_keeps_the_lead_of_an_outlier_beyond_three_deviations() -> None:
    # Ten zeros and a one: mean 1/11, std sqrt(10)/11, so the one sits sqrt(10) > 3 deviations
    # up and scores above 1; clipping it to 1 would tie it with everything past 3 deviations.
    ranked = [("z", 1.0)] + [(f"id{n}", 0.0) for n in range(10)]
    fused = {item.chunk_id: item.score for item in fuse({"dense": ranked}, FusionMethod.DBSF)}
    assert fused["z"] == pytest.approx(0.5 + math.sqrt(10) / 6)
    assert fused["id0"] == pytest.approx(0.5 - 1 / (6 * math.sqrt(10)))


def test_raw_scores_follow_their_ids_after_re_sorting() -> None:
    lists = {"dense": [("a", 0.9), ("b", 0.8)], "keyword": [("b", 7.0), ("c", 3.0)]}
    fused = {item.chunk_id: item for item in fuse(lists, FusionMethod.RRF)}
    assert fuse(lists, FusionMethod.RRF)[0].chunk_id == "b"
    assert fused["a"].scores == {"dense": 0.9}
    assert fused["b"].scores == {"dense": 0.8, "keyword": 7.0}
    assert fused["c"].scores == {"keyword": 3.0}


@pytest.mark.parametrize("method", list(FusionMethod))
def test_empty_lists_contribute_nothing(method: FusionMethod) -> None:
    assert fuse({}, method) == []
    assert fuse({"dense": [], "keyword": []}, method) == []
    only = fuse({"dense": [], "keyword": [("a", 2.0)]}, method)
    assert [(item.chunk_id, item.scores) for item in only] == [("a", {"keyword": 2.0})]


@pytest.mark.parametrize(
    ("weights", "rrf_k", "method", "message"),
    [
        ({"dense": -0.1}, 60, FusionMethod.RRF, "finite and >= 0"),
        ({"dense": math.nan}, 60, FusionMethod.WEIGHTED, "finite and >= 0"),
        ({"dense": math.inf}, 60, FusionMethod.DBSF, "finite and >= 0"),
        (None, 0, FusionMethod.RRF, "rrf_k"),
        (None, 60, "borda", "not a valid FusionMethod"),
    ],
)
def test_invalid_parameters_are_rejected(
    weights: dict[str, float] | None, rrf_k: int, method: FusionMethod, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        fuse({"dense": [("a", 1.0)]}, method, weights=weights, rrf_k=rrf_k)


@pytest.mark.parametrize("score", [math.nan, math.inf])
def test_non_finite_scores_are_rejected(score: float) -> None:
    with pytest.raises(ValueError, match="finite"):
        fuse({"dense": [("a", 1.0), ("b", score)]}, FusionMethod.WEIGHTED)


@settings(max_examples=100)
@given(source_lists, methods, weight_maps)
def test_duplicates_within_a_list_do_not_change_the_result(
    lists: dict, method: FusionMethod, weights: dict
) -> None:
    deduplicated = {
        source: list(zip(*first_occurrences(ranked), strict=True))
        for source, ranked in lists.items()
    }
    assert fuse(lists, method, weights=weights) == fuse(deduplicated, method, weights=weights)


@settings(max_examples=100)
@given(source_lists, methods, weight_maps)
def test_source_order_does_not_change_the_result(
    lists: dict, method: FusionMethod, weights: dict
) -> None:
    reversed_lists = dict(reversed(lists.items()))
    assert fuse(lists, method, weights=weights) == fuse(reversed_lists, method, weights=weights)


@settings(max_examples=100)
@given(source_lists, methods, weight_maps)
def test_output_covers_the_union_sorted_by_score_then_id(
    lists: dict, method: FusionMethod, weights: dict
) -> None:
    fused = fuse(lists, method, weights=weights)
    union = {item_id for ranked in lists.values() for item_id, _ in ranked}
    assert [item.chunk_id for item in fused] == sorted(union, key=lambda i: (-_score(fused, i), i))
    for better, worse in itertools.pairwise(fused):
        assert better.score > worse.score or (
            better.score == worse.score and better.chunk_id < worse.chunk_id
        )


def _score(fused: list[Candidate], item_id: str) -> float:
    return next(item.score for item in fused if item.chunk_id == item_id)


@settings(max_examples=100)
@given(source_lists, methods, weight_maps)
def test_each_id_carries_the_first_raw_score_of_every_source_that_found_it(
    lists: dict, method: FusionMethod, weights: dict
) -> None:
    expected: dict[str, dict[str, float]] = {}
    for source, ranked in lists.items():
        for item_id, score in reversed(ranked):
            expected.setdefault(item_id, {})[source] = score
    assert {item.chunk_id: item.scores for item in fuse(lists, method, weights=weights)} == expected


@settings(max_examples=100)
@given(source_lists, methods, weight_maps)
def test_fused_scores_stay_within_the_weighted_maximum(
    lists: dict, method: FusionMethod, weights: dict
) -> None:
    best = 1 / 61 if method is FusionMethod.RRF else 1.0
    ceiling = sum(weights.get(source, 1.0) * best for source in lists)
    for item in fuse(lists, method, weights=weights):
        assert 0.0 <= item.score <= ceiling + 1e-9


@settings(max_examples=100)
@given(ranked_lists, ranked_lists, ranked_lists, methods)
def test_a_zero_weight_source_only_reports_its_raw_scores(
    dense: list, keyword: list, sparse: list, method: FusionMethod
) -> None:
    """Ids the other sources found keep their exact scores and relative order.

    Ids only the muted source found score 0 and may tie with (and, by id, sort among) ids the
    others normalised to 0, so the claim is about the others' ids, not the whole ranking.
    """
    with_muted = fuse(
        {"dense": dense, "keyword": keyword, "sparse": sparse}, method, weights={"keyword": 0.0}
    )
    without = fuse({"dense": dense, "sparse": sparse}, method)
    others = {item.chunk_id for item in without}
    kept = [(item.chunk_id, item.score) for item in with_muted if item.chunk_id in others]
    assert kept == ranking(without)
    muted_only = [item for item in with_muted if item.chunk_id not in others]
    assert all(item.score == 0.0 and set(item.scores) == {"keyword"} for item in muted_only)
    assert {item.chunk_id for item in muted_only} == {item_id for item_id, _ in keyword} - others


@settings(max_examples=100)
@given(ids, scores, scores, st.sampled_from([FusionMethod.WEIGHTED, FusionMethod.DBSF]))
def test_single_item_lists_count_in_full_under_score_methods(
    item_id: str, dense_score: float, keyword_score: float, method: FusionMethod
) -> None:
    alone = fuse({"dense": [(item_id, dense_score)]}, method)
    assert ranking(alone) == [(item_id, 1.0)]
    both = fuse({"dense": [(item_id, dense_score)], "keyword": [(item_id, keyword_score)]}, method)
    assert ranking(both) == [(item_id, 2.0)]


def test_a_search_s_own_matches_fuse_as_their_ids_and_scores() -> None:
    dense = [QueryMatch("a", 0.9, None, {"domain": "tea"}), QueryMatch("b", 0.8, (1.0,), {})]
    keyword = [KeywordMatch("b", 7.0), KeywordMatch("c", 2.0)]
    pairs = {"dense": [("a", 0.9), ("b", 0.8)], "keyword": [("b", 7.0), ("c", 2.0)]}
    for method in FusionMethod:
        assert fuse({"dense": dense, "keyword": keyword}, method) == fuse(pairs, method)
