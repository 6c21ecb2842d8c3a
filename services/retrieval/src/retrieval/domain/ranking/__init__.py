"""Pure ranking math: fusion of several sources' rankings and diversification."""

from retrieval.domain.ranking.candidate import Candidate
from retrieval.domain.ranking.diversity import cap_per_group, mmr
from retrieval.domain.ranking.fusion import (
    FusionMethod,
    Ranked,
    first_occurrences,
    fuse,
    min_max_scaled,
)

__all__ = [
    "Candidate",
    "FusionMethod",
    "Ranked",
    "cap_per_group",
    "first_occurrences",
    "fuse",
    "min_max_scaled",
    "mmr",
]
