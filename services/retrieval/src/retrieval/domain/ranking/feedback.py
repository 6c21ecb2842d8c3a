"""Relevance feedback on vectors."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]


def rocchio(query: Vector, relevant: Sequence[Vector], alpha: float, beta: float) -> Vector:
    """``alpha * query + beta * mean(relevant)``, scaled to unit length (Rocchio's formula
    without negative feedback, each vector taken at unit length)."""
    q = np.asarray(query, dtype=np.float64)
    moved = alpha * unit(q)
    if relevant:
        moved = moved + beta * np.mean(
            [unit(np.asarray(v, dtype=np.float64)) for v in relevant], axis=0
        )
    return unit(moved).astype(np.float32)


def unit(vector: npt.NDArray[np.floating]) -> npt.NDArray[np.floating]:
    """The vector scaled to length 1; a zero vector as it is."""
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector


def unit_rows(matrix: npt.NDArray[np.floating]) -> npt.NDArray[np.floating]:
    """Each row scaled to length 1; a zero row as it is."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
