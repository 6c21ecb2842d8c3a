"""Vectors shaped like real embeddings, for benchmarks of a vector index at sizes no corpus here
has: a Gaussian mixture fitted to real passage vectors (k-means centres, then each cluster's
spread per dimension), sampled and scaled to unit length.

HNSW's recall on uniformly random vectors says nothing about its recall on embeddings, which
sit in clusters on a thin shell; a sample of this mixture keeps the clusters and their spread.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]


def unit(values: npt.NDArray[np.floating]) -> Matrix:
    return (values / np.linalg.norm(values, axis=1, keepdims=True)).astype(np.float32)


@dataclass(frozen=True)
class Mixture:
    centres: Matrix
    spreads: Matrix
    weights: npt.NDArray[np.float64]

    @classmethod
    def fit(cls, vectors: Matrix, clusters: int, *, iterations: int = 25, seed: int = 0) -> Mixture:
        """k-means (Lloyd, started from distinct random vectors), then per cluster the
        standard deviation of every dimension."""
        rng = np.random.default_rng(seed)
        centres = vectors[rng.choice(vectors.shape[0], clusters, replace=False)].copy()
        for _ in range(iterations):
            assigned = assignments(vectors, centres)
            for cluster in range(clusters):
                members = vectors[assigned == cluster]
                if members.shape[0]:
                    centres[cluster] = members.mean(axis=0)
        assigned = assignments(vectors, centres)
        spreads = np.stack(
            [
                vectors[assigned == cluster].std(axis=0)
                if np.any(assigned == cluster)
                else np.zeros(vectors.shape[1], dtype=np.float32)
                for cluster in range(clusters)
            ]
        )
        counts = np.bincount(assigned, minlength=clusters).astype(np.float64)
        return cls(centres, spreads.astype(np.float32), counts / counts.sum())

    def sample(self, count: int, seed: int) -> Matrix:
        rng = np.random.default_rng(seed)
        chosen = rng.choice(self.centres.shape[0], size=count, p=self.weights)
        noise = rng.standard_normal((count, self.centres.shape[1]), dtype=np.float32)
        return unit(self.centres[chosen] + noise * self.spreads[chosen])


def assignments(vectors: Matrix, centres: Matrix) -> npt.NDArray[np.intp]:
    """The nearest centre of each vector (squared Euclidean distance)."""
    distances = (centres**2).sum(axis=1)[None, :] - 2 * vectors @ centres.T
    return np.argmin(distances, axis=1)
