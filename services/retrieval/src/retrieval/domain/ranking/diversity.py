"""Diversification of a ranked candidate list: maximal marginal relevance and per-group caps."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from retrieval.domain.ranking.feedback import unit_rows
from retrieval.domain.ranking.fusion import min_max_scaled


def mmr(relevance: Sequence[float], vectors: np.ndarray, *, k: int, lambda_: float) -> list[int]:
    """Indices of up to `k` candidates, in pick order, trading relevance for novelty.

    Each pick maximises ``lambda_ * rel - (1 - lambda_) * max cosine to the picks so far``,
    with relevance min-max scaled to [0, 1] (all equal: 1.0); ties go to the lower index.
    """
    if not 0.0 <= lambda_ <= 1.0:
        raise ValueError(f"lambda_ must be in [0, 1], got {lambda_}")
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    matrix = np.asarray(vectors, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != len(relevance):
        raise ValueError(
            f"vectors must have one row per candidate: {len(relevance)} rows, got {matrix.shape}"
        )
    count = min(k, len(relevance))
    if count == 0:
        return []

    gain = lambda_ * np.asarray(min_max_scaled(relevance))
    units = unit_rows(matrix)
    available = np.ones(len(relevance), dtype=bool)
    closest = np.zeros(len(relevance))
    picks: list[int] = []
    for _ in range(count):
        marginal = np.where(available, gain - (1.0 - lambda_) * closest, -np.inf)
        pick = int(np.argmax(marginal))
        picks.append(pick)
        available[pick] = False
        similarity = units @ units[pick]
        closest = similarity if len(picks) == 1 else np.maximum(closest, similarity)
    return picks


def cap_per_group(groups: Sequence[str], cap: int) -> list[int]:
    """Indices, in input order, of the items kept when each group may keep its first `cap`."""
    if cap < 1:
        raise ValueError(f"cap must be at least 1, got {cap}")
    seen: Counter[str] = Counter()
    kept: list[int] = []
    for index, group in enumerate(groups):
        if seen[group] < cap:
            seen[group] += 1
            kept.append(index)
    return kept
