"""Pure ranking math: fusion of several sources' rankings (diversification, which needs
numpy, is ``retrieval.domain.ranking.diversity``)."""

from retrieval.domain.ranking.candidate import Candidate
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
    "first_occurrences",
    "fuse",
    "min_max_scaled",
]
