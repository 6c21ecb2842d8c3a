"""What a retrieval ranks before it fetches any text."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple


class Candidate(NamedTuple):
    """A chunk a search found, before its text is fetched. A named tuple: a retrieval makes
    hundreds, and a frozen dataclass takes twice as long to build."""

    chunk_id: str
    score: float
    """The score the ranking uses."""
    scores: Mapping[str, float]
    """Scores by source (``dense``: cosine similarity, ``keyword``, ``fused``)."""
