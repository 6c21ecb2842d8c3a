"""The redundancy filter: hand-computed drops and properties."""

from __future__ import annotations

from random import Random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.domain.ranking.compression import non_redundant

small_vectors = st.lists(st.integers(-3, 3), min_size=3, max_size=3)
maybe_vectors = st.lists(st.none() | small_vectors, max_size=12)
thresholds = st.floats(0.05, 0.99)


def arrays(vectors: list[list[int] | None]) -> list[np.ndarray | None]:
    return [None if v is None else np.array(v, dtype=np.float64) for v in vectors]


def cosine(left: np.ndarray, right: np.ndarray) -> float:
    return float(left @ right / (np.linalg.norm(left) * np.linalg.norm(right)))


def known(vector: np.ndarray | None) -> bool:
    return vector is not None and bool(np.any(vector))


def test_a_near_copy_of_a_better_candidate_is_dropped() -> None:
    vectors = arrays([[1, 0, 0], [10, 1, 0], [0, 1, 0], [0, 0, 1]])
    # cos(v0, v1) = 10 / sqrt(101) = 0.995; v2 and v3 are orthogonal to v0.
    assert non_redundant(vectors, 0.99) == [0, 2, 3]
    assert non_redundant(vectors, 0.999) == [0, 1, 2, 3]


def test_a_dropped_candidate_drops_nothing() -> None:
    # v1 is close to v0 (0.71) and goes; v2 is as close to v1 but orthogonal to v0: it stays.
    vectors = arrays([[1, 0, 0], [1, 1, 0], [0, 1, 0]])
    assert non_redundant(vectors, 0.7) == [0, 2]
    assert non_redundant(vectors, 0.8) == [0, 1, 2]


def test_the_threshold_is_inclusive() -> None:
    vectors = arrays([[1, 0, 0], [1, 1, 0]])
    exact = cosine(*vectors)  # type: ignore[arg-type]
    assert non_redundant(vectors, exact) == [0]
    assert non_redundant(vectors, np.nextafter(exact, 1.0)) == [0, 1]


def test_a_candidate_without_a_vector_is_kept_and_drops_nothing() -> None:
    vectors = arrays([None, [1, 0, 0], [0, 0, 0], [1, 0, 0], None])
    assert non_redundant(vectors, 0.5) == [0, 1, 2, 4]


def test_threshold_one_keeps_exact_copies() -> None:
    vectors = arrays([[1, 2, 3], [1, 2, 3], [2, 4, 6]])
    assert non_redundant(vectors, 1.0) == [0, 1, 2]
    assert non_redundant(vectors, 0.99) == [0]


def test_nothing_in_nothing_out() -> None:
    assert non_redundant([], 0.5) == []


@settings(max_examples=200)
@given(maybe_vectors, thresholds)
def test_kept_is_an_ordered_subset_that_keeps_the_best(
    raw: list[list[int] | None], threshold: float
) -> None:
    kept = non_redundant(arrays(raw), threshold)
    assert kept == sorted(set(kept))
    assert set(kept) <= set(range(len(raw)))
    if raw:
        assert kept[0] == 0


@settings(max_examples=200)
@given(maybe_vectors, thresholds)
def test_kept_vectors_are_pairwise_below_the_threshold_and_each_drop_has_a_reason(
    raw: list[list[int] | None], threshold: float
) -> None:
    vectors = arrays(raw)
    kept = non_redundant(vectors, threshold)
    with_vectors = [i for i in kept if known(vectors[i])]
    for position, i in enumerate(with_vectors):
        for j in with_vectors[:position]:
            assert cosine(vectors[i], vectors[j]) < threshold  # type: ignore[arg-type]
    for dropped in set(range(len(raw))) - set(kept):
        assert known(vectors[dropped])
        assert any(
            cosine(vectors[dropped], vectors[j]) >= threshold  # type: ignore[arg-type]
            for j in with_vectors
            if j < dropped
        )


@settings(max_examples=100)
@given(maybe_vectors)
def test_threshold_one_is_the_identity(raw: list[list[int] | None]) -> None:
    assert non_redundant(arrays(raw), 1.0) == list(range(len(raw)))


@settings(max_examples=200)
@given(
    st.lists(small_vectors.filter(any), min_size=1, max_size=6),
    st.lists(st.integers(1, 4), min_size=1, max_size=6),
    st.randoms(use_true_random=False),
    thresholds,
)
def test_copies_and_multiples_are_never_both_kept(
    distinct: list[list[int]], factors: list[int], random: Random, threshold: float
) -> None:
    """Of vectors pointing the same way (cosine 1) one is kept."""
    rows = [[factor * x for x in vector] for vector in distinct for factor in factors]
    random.shuffle(rows)
    vectors = arrays(rows)
    kept = [vectors[i] for i in non_redundant(vectors, threshold)]
    for a in range(len(kept)):
        for b in range(a):
            assert cosine(kept[a], kept[b]) < 1 - 1e-9  # type: ignore[arg-type]
