"""The benchmark's generator keeps the shape of the vectors it is fitted to: vectors that vary
within their clusters along a few directions give samples that do too."""

from __future__ import annotations

import numpy as np

from retrieval_bench.mixture import Mixture, intrinsic_dimension, unit

DIMENSION = 96


def low_rank_clusters(count: int, clusters: int, rank: int, seed: int) -> np.ndarray:
    """Unit vectors around ``clusters`` centres, each cluster spread along ``rank`` directions."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(clusters, DIMENSION))
    bases = rng.normal(size=(clusters, rank, DIMENSION)) * 0.3
    chosen = rng.integers(0, clusters, count)
    weights = rng.normal(size=(count, rank))
    return unit(centres[chosen] + np.einsum("nr,nrd->nd", weights, bases[chosen]))


def test_the_intrinsic_dimension_is_that_of_the_surface_the_vectors_lie_on() -> None:
    rng = np.random.default_rng(0)
    for rank in (3, 9):
        basis = rng.normal(size=(rank, DIMENSION))
        flat = (rng.normal(size=(3_000, rank)) @ basis).astype(np.float32)
        sphere = rank - 1
        assert abs(intrinsic_dimension(unit(flat)) - sphere) < 0.25 * sphere


def test_samples_keep_the_dimension_of_their_clusters_not_every_dimension() -> None:
    real = low_rank_clusters(3_000, clusters=12, rank=6, seed=1)
    mixture = Mixture.fit(real, clusters=12, components=6)
    samples = mixture.sample(3_000, seed=2)

    assert samples.shape == real.shape
    assert np.allclose(np.linalg.norm(samples, axis=1), 1.0, atol=1e-5)
    assert abs(intrinsic_dimension(samples) - intrinsic_dimension(real)) < 2.5
    assert intrinsic_dimension(samples) < DIMENSION / 4
