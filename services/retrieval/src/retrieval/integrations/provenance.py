"""What a framework's document or node carries of a match: where its text comes from and how
it scored."""

from __future__ import annotations

from typing import Any

from retrieval.domain.context import provenance_fields
from retrieval.domain.models import RetrievalMatch


def match_metadata(match: RetrievalMatch) -> dict[str, Any]:
    """The chunk id, the document's provenance (id, title, source, section, pages, domain and
    its own metadata) and the scores (``score``, the ranking's; ``scores``, by source:
    ``dense``, ``keyword``, ``fused``), in plain JSON types."""
    return {
        **provenance_fields(match),
        "domain": match.domain,
        "document_metadata": dict(match.metadata),
        "score": match.score,
        "scores": dict(match.scores),
    }
