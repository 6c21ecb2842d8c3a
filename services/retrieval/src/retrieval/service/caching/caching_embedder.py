"""An Embedder that embeds each passage once per model, keeping vectors in an EmbeddingCache.

Entries are keyed by model, dimension, role and the exact text
(``retrieval.domain.embedding_keys``), so renamed documents, changed metadata and
re-ingestion reuse vectors, and another model's vectors are never returned. After every
write the cache is trimmed to ``max_entries``.

The cache only saves time: when it fails, a warning is logged and the passages are embedded
as if it were not there. Queries are passed through.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import structlog

from retrieval.domain.embedding_keys import InputType, embedding_key
from retrieval.errors import EmbeddingModelMismatchError, RetrievalError
from retrieval.ports.embedder import Embedder, Matrix, Vector
from retrieval.ports.embedding_cache import EmbeddingCache
from retrieval.service.delegating_embedder import DelegatingEmbedder

log = structlog.get_logger("embedding_cache")


class CachingEmbedder(DelegatingEmbedder):
    def __init__(self, embedder: Embedder, cache: EmbeddingCache, max_entries: int) -> None:
        super().__init__(embedder)
        self._cache = cache
        self._max_entries = max_entries

    async def embed_passages(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        keys = {
            text: embedding_key(self.model, self.dimension, InputType.PASSAGE, text)
            for text in texts
        }
        vectors = await self._lookup(list(keys.values()))
        missing = [text for text, key in keys.items() if key not in vectors]
        if missing:
            fresh = await self._embed(missing)
            computed = {keys[text]: vector for text, vector in zip(missing, fresh, strict=True)}
            await self._store(computed)
            vectors |= computed
        log.debug("embed_passages.cached", hits=len(keys) - len(missing), embedded=len(missing))
        return np.stack([vectors[keys[text]] for text in texts]).astype(np.float32, copy=False)

    async def _embed(self, texts: list[str]) -> Matrix:
        fresh = await self._embedder.embed_passages(texts)
        if fresh.shape != (len(texts), self.dimension):
            raise EmbeddingModelMismatchError(
                f"{self.model} returned vectors of shape {fresh.shape[1:]}, "
                f"not the declared ({self.dimension},)",
                field="dimension",
            )
        return fresh

    async def _lookup(self, keys: list[str]) -> dict[str, Vector]:
        try:
            return await self._cache.get_many(keys)
        except RetrievalError as error:
            log.warning("embedding_cache.lookup_failed", passages=len(keys), error=str(error))
            return {}

    async def _store(self, entries: dict[str, Vector]) -> None:
        try:
            await self._cache.put_many(entries)
            await self._cache.evict(self._max_entries)
        except RetrievalError as error:
            log.warning("embedding_cache.store_failed", passages=len(entries), error=str(error))
