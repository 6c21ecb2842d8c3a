"""Percentiles of measured values (latencies, scores), interpolated linearly as numpy does."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if values else 0.0


def summary(values: Sequence[float]) -> dict[str, float]:
    """p50 and p95 (linear interpolation) and the maximum, in the unit given."""
    return {
        "p50": percentile(values, 50),
        "p95": percentile(values, 95),
        "max": max(values, default=0.0),
    }
