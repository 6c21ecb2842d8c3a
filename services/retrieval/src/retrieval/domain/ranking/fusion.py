"""Fusion of the ranked lists several sources return for one query into one ranking.

RRF reads ranks only: no calibration, safe when the sources' score scales cannot be compared.
WEIGHTED (min-max) and DBSF (mean +- 3 std) read scores, so a clear lead counts more; DBSF
does not clip, so a score beyond three deviations keeps its lead (as Qdrant's does).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

Ranked = Sequence[tuple[str, float]]


class FusionMethod(StrEnum):
    RRF = "rrf"
    WEIGHTED = "weighted"
    DBSF = "dbsf"


@dataclass(frozen=True)
class Fused:
    """One id of the fused ranking."""

    id: str
    score: float
    scores: Mapping[str, float]
    """Raw score of each source that found the id, by source name."""


def first_occurrences(ranked: Ranked) -> list[tuple[str, float]]:
    """Each id's first (best-ranked) entry, in the order given."""
    seen: set[str] = set()
    kept: list[tuple[str, float]] = []
    for item_id, score in ranked:
        if item_id not in seen:
            seen.add(item_id)
            kept.append((item_id, score))
    return kept


def fuse(
    lists: Mapping[str, Ranked],
    method: FusionMethod,
    *,
    weights: Mapping[str, float] | None = None,
    rrf_k: int = 60,
) -> list[Fused]:
    """The union of ids, best fused score first, ties by id; each list deduplicated first.

    A source missing from `weights` weighs 1.0; weight 0 keeps a source out of the score.
    """
    method = FusionMethod(method)
    if rrf_k < 1:
        raise ValueError(f"rrf_k must be at least 1, got {rrf_k}")
    weights = weights or {}
    for source, weight in weights.items():
        if not (math.isfinite(weight) and weight >= 0):
            raise ValueError(f"weight of {source!r} must be finite and >= 0, got {weight}")

    fused: dict[str, float] = {}
    raw: dict[str, dict[str, float]] = {}
    # A fixed summation order makes the result independent of the mapping's order.
    for source in sorted(lists):
        ranked = first_occurrences(lists[source])
        if not ranked:
            continue
        scores = [float(score) for _, score in ranked]
        if not all(math.isfinite(score) for score in scores):
            raise ValueError(f"scores of {source!r} must be finite")
        weight = weights.get(source, 1.0)
        contributions = _contributions(method, scores, rrf_k)
        for (item_id, _), score, contribution in zip(ranked, scores, contributions, strict=True):
            fused[item_id] = fused.get(item_id, 0.0) + weight * contribution
            raw.setdefault(item_id, {})[source] = score

    ranking = sorted(fused, key=lambda item_id: (-fused[item_id], item_id))
    return [Fused(id=item_id, score=fused[item_id], scores=raw[item_id]) for item_id in ranking]


def _contributions(method: FusionMethod, scores: list[float], rrf_k: int) -> list[float]:
    """What each entry of one deduplicated list adds to its id's fused score, before weighting."""
    if method is FusionMethod.RRF:
        return [1.0 / (rrf_k + rank) for rank in range(1, len(scores) + 1)]
    values = np.asarray(scores, dtype=np.float64)
    if method is FusionMethod.WEIGHTED:
        return min_max_scaled(values).tolist()
    return _distribution(values).tolist()


def min_max_scaled(values: np.ndarray) -> np.ndarray:
    """`values` scaled to [0, 1]; all equal (one value included) gives 1.0, never 0."""
    low, high = values.min(), values.max()
    if low == high:
        return np.ones_like(values)
    return (values - low) / (high - low)


def _distribution(values: np.ndarray) -> np.ndarray:
    spread = values.std()
    # Equal scores can leave rounding noise in the computed spread: test equality directly.
    if spread == 0 or values.min() == values.max():
        return np.ones_like(values)
    low = values.mean() - 3 * spread
    return (values - low) / (6 * spread)
