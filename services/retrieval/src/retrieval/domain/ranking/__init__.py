"""Pure ranking math: fusion of several sources' rankings and diversification."""

from retrieval.domain.ranking.diversity import cap_per_group, mmr
from retrieval.domain.ranking.fusion import (
    Fused,
    FusionMethod,
    Ranked,
    first_occurrences,
    fuse,
    min_max_scaled,
)

__all__ = [
    "Fused",
    "FusionMethod",
    "Ranked",
    "cap_per_group",
    "first_occurrences",
    "fuse",
    "min_max_scaled",
    "mmr",
]
