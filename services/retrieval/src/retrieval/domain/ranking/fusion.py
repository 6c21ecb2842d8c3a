"""Fusion of the ranked lists several sources return for one query into one ranking.

RRF reads ranks only: no calibration, safe when the sources' score scales cannot be compared.
WEIGHTED (min-max) and DBSF (mean +- 3 std) read scores, so a clear lead counts more; DBSF
does not clip, so a score beyond three deviations keeps its lead (as Qdrant's does).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from enum import StrEnum
from operator import itemgetter
from typing import NamedTuple

Ranked = Sequence[tuple[str, float]]


class FusionMethod(StrEnum):
    RRF = "rrf"
    WEIGHTED = "weighted"
    DBSF = "dbsf"


class Fused(NamedTuple):
    """One id of the fused ranking."""

    id: str
    score: float
    scores: Mapping[str, float]
    """Raw score of each source that found the id, by source name, and the fused score under
    ``fuse``'s ``label`` when it has one."""


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
    label: str | None = None,
) -> list[Fused]:
    """The union of ids, best fused score first, ties by id; each list deduplicated first.

    A source missing from `weights` weighs 1.0; weight 0 keeps a source out of the score.
    With a `label`, each id's `scores` hold its fused score under it too.
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
        if not all(map(math.isfinite, scores)):
            raise ValueError(f"scores of {source!r} must be finite")
        weight = weights.get(source, 1.0)
        contributions = _contributions(method, scores, rrf_k)
        for (item_id, _), score, contribution in zip(ranked, scores, contributions, strict=True):
            fused[item_id] = fused.get(item_id, 0.0) + weight * contribution
            found = raw.get(item_id)
            if found is None:
                raw[item_id] = {source: score}
            else:
                found[source] = score

    ranking = sorted(fused.items())
    ranking.sort(key=itemgetter(1), reverse=True)  # stable: equal scores stay in id order
    if label is not None:
        for item_id, score in ranking:
            raw[item_id][label] = score
    return [Fused._make((item_id, score, raw[item_id])) for item_id, score in ranking]


def _contributions(method: FusionMethod, scores: list[float], rrf_k: int) -> list[float]:
    """What each entry of one deduplicated list adds to its id's fused score, before weighting.
    Plain Python: the lists are short, and numpy's set-up would cost more than the sums."""
    if method is FusionMethod.RRF:
        return [1.0 / (rrf_k + rank) for rank in range(1, len(scores) + 1)]
    if method is FusionMethod.WEIGHTED:
        return min_max_scaled(scores)
    return _distribution(scores)


def min_max_scaled(values: Sequence[float]) -> list[float]:
    """``values`` scaled to [0, 1]; all equal (one value included) gives 1.0, never 0."""
    low, high = min(values), max(values)
    if low == high:
        return [1.0] * len(values)
    span = high - low
    return [(value - low) / span for value in values]


def _distribution(values: Sequence[float]) -> list[float]:
    mean = math.fsum(values) / len(values)
    spread = math.sqrt(math.fsum((value - mean) ** 2 for value in values) / len(values))
    # Equal scores can leave rounding noise in the computed spread: test equality directly.
    if spread == 0 or min(values) == max(values):
        return [1.0] * len(values)
    low = mean - 3 * spread
    return [(value - low) / (6 * spread) for value in values]
