from __future__ import annotations

from typing import Protocol

from retrieval.domain.graph import Extraction


class KnowledgeExtractor(Protocol):
    """Finds the entities a text names and the typed relations it states between them
    (``retrieval.domain.graph``), for the knowledge graph."""

    @property
    def version(self) -> str:
        """Names the extractor and everything its output depends on (model, prompt), e.g.
        ``llm:<model>:v1`` or ``rules:1``: results stored under one version are never
        reused under another."""
        ...

    async def extract(self, text: str) -> Extraction:
        """The entities ``text`` names, each once (names that differ only in case are one),
        normalised as ``EntityExtractor`` names are, and the relations between them: every
        relation's endpoints are name keys of its names. A blank text gives
        ``Extraction()``. Raises ``BackendError`` (``UnreadableReplyError`` among them) when
        a backend it asks fails."""
        ...
