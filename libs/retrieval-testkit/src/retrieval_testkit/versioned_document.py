"""A document written in versions, and how to tell which version an answer shows: for tests
of what replicas answer after a write."""

from __future__ import annotations

from collections.abc import Iterable

from retrieval.domain.models import RagDocument

QUESTION = "how many hours is fresh tea leaf withered"
"""A question the versioned document answers."""

OTHER = RagDocument(
    document_id="d2",
    title="Rolling",
    domain="quality_standards",
    content="Withered leaf is rolled to break its cells and start oxidation.",
)
"""A second document, so that the namespace is not emptied when the first is deleted."""


def version(text: str) -> RagDocument:
    """Version ``text`` of document ``d1``."""
    return RagDocument(
        document_id="d1",
        title="Withering",
        domain="quality_standards",
        content=f"Fresh tea leaf is withered for {text} hours before rolling.",
    )


def shows(contents: Iterable[str], text: str | None = None) -> bool:
    """Whether the answer's texts show version ``text`` of ``d1`` (any version, if None)."""
    marker = "withered for " if text is None else f"withered for {text} hours"
    return any(marker in content for content in contents)
