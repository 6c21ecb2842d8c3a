"""Redundancy filtering of a ranked candidate list: near-copies of better candidates go."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from retrieval.domain.ranking.feedback import unit_rows


def non_redundant(vectors: Sequence[np.ndarray | None], threshold: float) -> list[int]:
    """Indices, in input order, of the candidates kept when one whose cosine similarity to a
    candidate already kept (ranked before it) is at least ``threshold`` is dropped.

    A threshold of 1 or more keeps every candidate, exact copies included. A candidate
    without a vector (None, or all zeros) has no cosine: it is kept and drops nothing.
    """
    known = [
        index
        for index, vector in enumerate(vectors)
        if vector is not None and np.any(np.asarray(vector))
    ]
    if threshold >= 1.0 or len(known) < 2:
        return list(range(len(vectors)))
    matrix = np.stack([np.asarray(vectors[index], dtype=np.float64) for index in known])
    units = unit_rows(matrix)
    similarity = units @ units.T
    kept = np.zeros(len(known), dtype=bool)
    dropped: set[int] = set()
    for row, index in enumerate(known):
        if np.any(similarity[row, :row][kept[:row]] >= threshold):
            dropped.add(index)
        else:
            kept[row] = True
    return [index for index in range(len(vectors)) if index not in dropped]
