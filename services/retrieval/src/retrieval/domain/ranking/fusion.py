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

from retrieval.domain.ranking.candidate import Candidate

Ranked = Sequence[tuple[str, float, *tuple[object, ...]]]
"""Entries best first, each an id and its score, then anything else the source returned
(a vector index's match carries its values and metadata)."""


class FusionMethod(StrEnum):
    RRF = "rrf"
    WEIGHTED = "weighted"
    DBSF = "dbsf"


def first_occurrences(ranked: Ranked) -> tuple[list[str], list[float]]:
    """The ids and scores of each id's first (best-ranked) entry, in the order given."""
    ids = list(map(itemgetter(0), ranked))
    scores = list(map(float, map(itemgetter(1), ranked)))
    if len(set(ids)) == len(ids):
        return ids, scores
    seen: set[str] = set()
    kept = [n for n, item_id in enumerate(ids) if not (item_id in seen or seen.add(item_id))]
    return [ids[n] for n in kept], [scores[n] for n in kept]


def fuse(
    lists: Mapping[str, Ranked],
    method: FusionMethod,
    *,
    weights: Mapping[str, float] | None = None,
    rrf_k: int = 60,
    label: str | None = None,
) -> list[Candidate]:
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
        ids, scores = first_occurrences(lists[source])
        if not ids:
            continue
        if not all(map(math.isfinite, scores)):
            raise ValueError(f"scores of {source!r} must be finite")
        weight = weights.get(source, 1.0)
        so_far, found = fused.get, raw.get
        for item_id, score, contribution in zip(
            ids, scores, _contributions(method, scores, rrf_k), strict=True
        ):
            fused[item_id] = so_far(item_id, 0.0) + weight * contribution
            kept = found(item_id)
            if kept is None:
                raw[item_id] = {source: score}
            else:
                kept[source] = score

    ranking = sorted(fused.items(), key=itemgetter(1), reverse=True)
    if len(set(fused.values())) < len(fused):  # equal scores: in id order
        ranking = sorted(fused.items())
        ranking.sort(key=itemgetter(1), reverse=True)
    # tuple.__new__ builds a named tuple at a third of the cost of its _make.
    new = tuple.__new__
    candidates = []
    for item_id, score in ranking:
        scores = raw[item_id]
        if label is not None:
            scores[label] = score
        candidates.append(new(Candidate, (item_id, score, scores)))
    return candidates


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
    spread = math.sqrt(math.fsum([(value - mean) ** 2 for value in values]) / len(values))
    # Equal scores can leave rounding noise in the computed spread: test equality directly.
    if spread == 0 or min(values) == max(values):
        return [1.0] * len(values)
    low, width = mean - 3 * spread, 6 * spread
    return [(value - low) / width for value in values]
