"""Vectors shaped like real embeddings, for benchmarks of a vector index at sizes no corpus here
has: a mixture of probabilistic PCA (Tipping and Bishop) fitted to real passage vectors.
k-means finds the clusters; each keeps its mean, its few main directions of spread with their
variances, and an even spread in every other direction (the variance left, shared out). A
sample is drawn from one cluster and scaled to unit length.

HNSW's recall on uniformly random vectors says nothing about its recall on embeddings, and
neither does a spread per dimension: real embeddings vary within a cluster along a few
directions, while a diagonal Gaussian fills all 384 of them (an intrinsic dimension of 63
where SciFact's vectors have 17), and its recall at a million records falls far below what
such vectors give. ``fidelity`` measures the mixture against the vectors it was fitted to.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]


def unit(values: npt.NDArray[np.floating]) -> Matrix:
    return (values / np.linalg.norm(values, axis=1, keepdims=True)).astype(np.float32)


@dataclass(frozen=True)
class Cluster:
    centre: Matrix
    directions: Matrix
    """Its main directions of spread, one per row."""
    scales: Matrix
    """The standard deviation along each direction beyond the even spread."""
    spread: float
    """The standard deviation of the even spread, in every direction."""

    @classmethod
    def fit(cls, members: Matrix, components: int) -> Cluster:
        centre = members.mean(axis=0)
        _, singular, directions = np.linalg.svd(members - centre, full_matrices=False)
        variances = singular**2 / max(1, members.shape[0] - 1)
        kept = min(components, max(0, variances.shape[0] - 1))
        spread = float(variances[kept:].sum() / (members.shape[1] - kept))
        scales = np.sqrt(np.maximum(variances[:kept] - spread, 0))
        return cls(centre, directions[:kept], scales.astype(np.float32), float(np.sqrt(spread)))

    def sample(self, count: int, rng: np.random.Generator) -> Matrix:
        along = rng.standard_normal((count, self.scales.shape[0]), dtype=np.float32) * self.scales
        even = rng.standard_normal((count, self.centre.shape[0]), dtype=np.float32) * self.spread
        return self.centre + along @ self.directions + even


@dataclass(frozen=True)
class Mixture:
    clusters: list[Cluster]
    weights: npt.NDArray[np.float64]

    @classmethod
    def fit(
        cls,
        vectors: Matrix,
        clusters: int,
        *,
        components: int = 8,
        iterations: int = 25,
        seed: int = 0,
    ) -> Mixture:
        """k-means (Lloyd, started from distinct random vectors), then each cluster's
        ``components`` main directions (clusters of fewer than two vectors are left out)."""
        rng = np.random.default_rng(seed)
        centres = vectors[rng.choice(vectors.shape[0], clusters, replace=False)].copy()
        for _ in range(iterations):
            assigned = assignments(vectors, centres)
            for cluster in range(clusters):
                members = vectors[assigned == cluster]
                if members.shape[0]:
                    centres[cluster] = members.mean(axis=0)
        assigned = assignments(vectors, centres)
        groups = [vectors[assigned == cluster] for cluster in range(clusters)]
        groups = [members for members in groups if members.shape[0] >= 2]
        counts = np.array([members.shape[0] for members in groups], dtype=np.float64)
        return cls([Cluster.fit(members, components) for members in groups], counts / counts.sum())

    def sample(self, count: int, seed: int) -> Matrix:
        rng = np.random.default_rng(seed)
        chosen = rng.choice(len(self.clusters), size=count, p=self.weights)
        samples = np.empty((count, self.clusters[0].centre.shape[0]), dtype=np.float32)
        for cluster in np.unique(chosen):
            rows = np.flatnonzero(chosen == cluster)
            samples[rows] = self.clusters[cluster].sample(rows.shape[0], rng)
        return unit(samples)


def assignments(vectors: Matrix, centres: Matrix) -> npt.NDArray[np.intp]:
    """The nearest centre of each vector (squared Euclidean distance)."""
    distances = (centres**2).sum(axis=1)[None, :] - 2 * vectors @ centres.T
    return np.argmin(distances, axis=1)


def nearest_two(vectors: Matrix) -> npt.NDArray[np.float64]:
    """The cosine of each unit vector to its nearest and second nearest other vector."""
    similarities = vectors @ vectors.T
    np.fill_diagonal(similarities, -np.inf)
    return -np.partition(-similarities, 1, axis=1)[:, :2].astype(np.float64)


def intrinsic_dimension(vectors: Matrix) -> float:
    """TwoNN (Facco et al., 2017): from the ratio of each vector's second nearest distance to
    its nearest, the dimension of the surface the vectors lie on."""
    return two_nearest_dimension(nearest_two(vectors))


def two_nearest_dimension(nearest: npt.NDArray[np.float64]) -> float:
    """TwoNN's estimate from the cosines of ``nearest_two``."""
    distances = np.sqrt(np.maximum(0.0, 2 - 2 * nearest))
    ratios = distances[:, 1] / np.maximum(distances[:, 0], 1e-12)
    ratios = ratios[ratios > 1]
    return float(ratios.shape[0] / np.log(ratios).sum())


def shape(vectors: Matrix) -> dict[str, float]:
    nearest = nearest_two(vectors)
    return {
        "intrinsic_dimension": two_nearest_dimension(nearest),
        "nearest_cosine_p50": float(np.median(nearest[:, 0])),
    }


def fidelity(real: Matrix, mixture: Mixture) -> dict[str, dict[str, float]]:
    """The real vectors and as many samples, side by side: intrinsic dimension and the median
    cosine to the nearest neighbour."""
    return {"real": shape(unit(real)), "mixture": shape(mixture.sample(real.shape[0], seed=7))}
