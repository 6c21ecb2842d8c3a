"""Rocchio's feedback on vectors: unit length, the identity without feedback, a move towards
what was found."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from retrieval.domain.ranking.feedback import rocchio, unit

DIM = 8
VECTORS = arrays(np.float32, DIM, elements=st.floats(-1, 1, width=32))


@given(VECTORS, st.lists(VECTORS, min_size=1, max_size=5))
def test_the_moved_query_has_unit_length_and_comes_closer(query, found) -> None:
    assume(np.linalg.norm(query) > 1e-3)
    centroid = np.mean([unit(v.astype(np.float64)) for v in found], axis=0)
    assume(np.linalg.norm(centroid) > 1e-3)
    moved = rocchio(query, found, alpha=1.0, beta=0.75)
    assert float(np.linalg.norm(moved)) == pytest.approx(1.0, abs=1e-5)
    before = float(unit(query.astype(np.float64)) @ unit(centroid))
    after = float(moved.astype(np.float64) @ unit(centroid))
    assert after >= before - 1e-5


@given(VECTORS, st.lists(VECTORS, max_size=3))
def test_no_feedback_weight_keeps_the_query(query, found) -> None:
    assume(np.linalg.norm(query) > 1e-3)
    moved = rocchio(query, found, alpha=1.0, beta=0.0)
    assert np.allclose(moved, unit(query.astype(np.float64)), atol=1e-6)


def test_a_zero_vector_stays_zero() -> None:
    assert not unit(np.zeros(DIM)).any()
