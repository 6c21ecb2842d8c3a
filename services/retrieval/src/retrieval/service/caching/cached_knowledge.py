"""A KnowledgeExtractor that reads each text once per extractor version, keeping what it
found in an ExtractionCache shared by every replica.

Entries are keyed by the extractor's ``version`` and the exact text (``extraction_key``), so
re-ingestion, repairs and copies of a text reuse the extraction, and another model's or
prompt's is never returned. The cache only saves calls: when it fails, a warning is logged
and the text is read as if it were not there.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import structlog

from retrieval.domain.graph import Extraction
from retrieval.errors import RetrievalError
from retrieval.ports.extraction_cache import ExtractionCache
from retrieval.ports.knowledge_extractor import KnowledgeExtractor

log = structlog.get_logger("extraction_cache")


def extraction_key(version: str, text: str) -> str:
    """``<version>:<sha256 of the UTF-8 text>``; read from the right, the parts never run
    into one another, whatever the version holds."""
    return f"{version}:{hashlib.sha256(text.encode()).hexdigest()}"


@dataclass(frozen=True, eq=False)
class CachedKnowledgeExtractor:
    inner: KnowledgeExtractor
    cache: ExtractionCache

    @property
    def version(self) -> str:
        return self.inner.version

    async def extract(self, text: str) -> Extraction:
        key = extraction_key(self.version, text)
        cached = await self._lookup(key)
        if cached is not None:
            return cached
        extraction = await self.inner.extract(text)
        await self._store(key, extraction)
        return extraction

    async def _lookup(self, key: str) -> Extraction | None:
        try:
            return (await self.cache.get_many([key])).get(key)
        except RetrievalError as error:
            log.warning("extraction_cache.lookup_failed", error=str(error))
            return None

    async def _store(self, key: str, extraction: Extraction) -> None:
        try:
            await self.cache.put_many({key: extraction})
        except RetrievalError as error:
            log.warning("extraction_cache.store_failed", error=str(error))
