"""What a framework's document or node carries of a match: where its text comes from and how
it scored."""

from __future__ import annotations

from typing import Any

from retrieval.domain.models import RetrievalMatch


def match_metadata(match: RetrievalMatch) -> dict[str, Any]:
    """The chunk id, the document's provenance (id, title, source, section, pages, domain and
    its own metadata) and the scores (``score``, the ranking's; ``scores``, by source:
    ``dense``, ``keyword``, ``fused``), in plain JSON types."""
    return {
        "chunk_id": match.chunk_id,
        "document_id": match.document_id,
        "title": match.title,
        "source": match.source,
        "section": match.section,
        "pages": list(match.pages),
        "domain": match.domain,
        "document_metadata": dict(match.metadata),
        "score": match.score,
        "scores": dict(match.scores),
    }
