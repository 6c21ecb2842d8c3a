"""The KnowledgeExtractor port on an EntityExtractor: the names it finds, no relations."""

from __future__ import annotations

from retrieval.domain.graph import Extraction
from retrieval.ports.entity_extractor import EntityExtractor

RULES_VERSION = "rules:2"
"""The version of the rule-based extractor's output (``RuleBasedEntityExtractor``); 2: names
with the year or ordinal written before them."""


class EntityNamesKnowledgeExtractor:
    """``entities``' names; ``version`` names that extractor (the rule-based one's by
    default)."""

    def __init__(self, entities: EntityExtractor, version: str = RULES_VERSION) -> None:
        self._entities = entities
        self._version = version

    @property
    def version(self) -> str:
        return self._version

    async def extract(self, text: str) -> Extraction:
        return Extraction(names=tuple(await self._entities.extract(text)))
