"""Maximal marginal relevance and per-group caps: hand-computed picks and properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.domain.ranking.diversity import cap_per_group, mmr

small_vectors = st.lists(st.integers(-3, 3), min_size=3, max_size=3)


@st.composite
def candidates(draw: st.DrawFn, *, ordered: bool = False) -> tuple[list[float], np.ndarray]:
    count = draw(st.integers(0, 10))
    relevance = draw(st.lists(st.floats(-10, 10), min_size=count, max_size=count))
    if ordered:
        relevance.sort(reverse=True)
    vectors = draw(st.lists(small_vectors, min_size=count, max_size=count))
    return relevance, np.array(vectors, dtype=np.float64).reshape(count, 3)


def cosine(left: np.ndarray, right: np.ndarray) -> float:
    return float(left @ right / (np.linalg.norm(left) * np.linalg.norm(right)))


@st.composite
def duplicates_among_others(draw: st.DrawFn) -> tuple[np.ndarray, set[int]]:
    """Copies of one vector (one of them first) mixed with vectors pointing elsewhere."""
    base = np.array(draw(small_vectors.filter(any)), dtype=np.float64)
    others = draw(
        st.lists(
            small_vectors.filter(any).filter(
                lambda vector: cosine(np.array(vector, dtype=np.float64), base) < 1 - 1e-9
            ),
            min_size=1,
            max_size=5,
        )
    )
    copies = draw(st.integers(1, 4))
    rest = draw(st.permutations([base.tolist()] * copies + others))
    vectors = np.array([base.tolist(), *rest], dtype=np.float64)
    duplicates = {index for index, vector in enumerate(vectors) if np.array_equal(vector, base)}
    return vectors, duplicates


def test_lambda_trades_relevance_for_novelty_by_hand() -> None:
    # Scaled relevance 1, 0.5, 0; the second vector points the same way as the first.
    relevance = [1.0, 0.9, 0.8]
    vectors = np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 1.0]])
    # lambda 0.5, second pick: 0.25 - 0.5 * 1 for the copy against 0 - 0.5 * 0 for the other.
    assert mmr(relevance, vectors, k=3, lambda_=0.5) == [0, 2, 1]
    # lambda 0.9: 0.45 - 0.1 * 1 beats 0.
    assert mmr(relevance, vectors, k=3, lambda_=0.9) == [0, 1, 2]


def test_an_opposite_vector_is_the_most_novel() -> None:
    vectors = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    assert mmr([1.0, 1.0, 1.0], vectors, k=3, lambda_=0.5) == [0, 2, 1]


def test_zero_vectors_are_similar_to_nothing() -> None:
    vectors = np.array([[1.0, 0.0], [0.0, 0.0], [1.0, 0.0]])
    assert mmr([0.7, 0.7, 0.7], vectors, k=3, lambda_=0.5) == [0, 1, 2]


def test_length_is_capped_by_k_and_by_the_candidates() -> None:
    vectors = np.eye(3)
    assert mmr([3.0, 2.0, 1.0], vectors, k=0, lambda_=0.5) == []
    assert mmr([3.0, 2.0, 1.0], vectors, k=2, lambda_=0.5) == [0, 1]
    assert mmr([3.0, 2.0, 1.0], vectors, k=10, lambda_=0.5) == [0, 1, 2]
    assert mmr([], np.zeros((0, 4)), k=5, lambda_=0.5) == []


@pytest.mark.parametrize(
    ("k", "lambda_", "vectors", "message"),
    [
        (2, -0.1, np.eye(2), "lambda_"),
        (2, 1.1, np.eye(2), "lambda_"),
        (2, math.nan, np.eye(2), "lambda_"),
        (-1, 0.5, np.eye(2), "k must be"),
        (2, 0.5, np.eye(3), "one row per candidate"),
        (2, 0.5, np.ones(2), "one row per candidate"),
    ],
)
def test_invalid_arguments_are_rejected(
    k: int, lambda_: float, vectors: np.ndarray, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        mmr([1.0, 0.5], vectors, k=k, lambda_=lambda_)


@settings(max_examples=100)
@given(candidates(), st.integers(0, 12), st.floats(0, 1))
def test_picks_are_distinct_valid_indices_up_to_k(
    given_candidates: tuple[list[float], np.ndarray], k: int, lambda_: float
) -> None:
    relevance, vectors = given_candidates
    picks = mmr(relevance, vectors, k=k, lambda_=lambda_)
    assert len(picks) == min(k, len(relevance))
    assert len(set(picks)) == len(picks)
    assert all(0 <= index < len(relevance) for index in picks)


@settings(max_examples=100)
@given(candidates(ordered=True), st.integers(0, 12))
def test_lambda_one_is_the_plain_ranking(
    given_candidates: tuple[list[float], np.ndarray], k: int
) -> None:
    relevance, vectors = given_candidates
    assert mmr(relevance, vectors, k=k, lambda_=1.0) == list(range(min(k, len(relevance))))


@settings(max_examples=100)
@given(duplicates_among_others(), st.data())
def test_lambda_zero_moves_past_exact_duplicates(
    vectors_and_duplicates: tuple[np.ndarray, set[int]], data: st.DataObject
) -> None:
    vectors, duplicates = vectors_and_duplicates
    relevance = data.draw(
        st.lists(st.floats(-10, 10), min_size=len(vectors), max_size=len(vectors))
    )
    picks = mmr(relevance, vectors, k=2, lambda_=0.0)
    assert picks[0] == 0
    assert picks[1] not in duplicates


def test_cap_per_group_by_hand() -> None:
    groups = ["d1", "d1", "d2", "d1", "d2", "d3", "d2"]
    assert cap_per_group(groups, 1) == [0, 2, 5]
    assert cap_per_group(groups, 2) == [0, 1, 2, 4, 5]
    assert cap_per_group([], 1) == []
    with pytest.raises(ValueError, match="cap"):
        cap_per_group(groups, 0)


@settings(max_examples=100)
@given(st.lists(st.sampled_from("abcd"), max_size=20), st.integers(1, 5))
def test_cap_per_group_keeps_the_first_cap_of_each_group_in_order(
    groups: list[str], cap: int
) -> None:
    kept = cap_per_group(groups, cap)
    assert kept == sorted(kept)
    for group in set(groups):
        positions = [index for index, name in enumerate(groups) if name == group]
        assert [index for index in kept if groups[index] == group] == positions[:cap]
    if all(groups.count(group) <= cap for group in groups):
        assert kept == list(range(len(groups)))
