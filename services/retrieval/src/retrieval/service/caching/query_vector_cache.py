"""An Embedder that keeps the vectors of recent queries in this process.

A query's vector depends only on the model and the text, so a cached one never goes stale
and replicas need not agree on anything: each keeps its own least-recently-used entries.
Vectors handed out are read-only, so no caller can change what the next one gets.
"""

from __future__ import annotations

from cachetools import LRUCache

from retrieval.observability.metrics import ServiceMetrics
from retrieval.ports.embedder import Embedder, Vector
from retrieval.service.delegating_embedder import DelegatingEmbedder


class QueryVectorCache(DelegatingEmbedder):
    """Passes passages through; answers a query asked before from memory (``max_entries``
    queries at most; 0 keeps none)."""

    def __init__(self, embedder: Embedder, max_entries: int, metrics: ServiceMetrics) -> None:
        super().__init__(embedder)
        self._vectors: LRUCache[str, Vector] | None = (
            LRUCache(maxsize=max_entries) if max_entries > 0 else None
        )
        self._lookups = metrics.query_vector_cache_lookups

    async def embed_query(self, text: str) -> Vector:
        if self._vectors is None:
            return await self._embedder.embed_query(text)
        kept = self._vectors.get(text)
        if kept is not None:
            self._lookups.labels(result="hit").inc()
            return kept
        self._lookups.labels(result="miss").inc()
        vector = (await self._embedder.embed_query(text)).copy()
        vector.setflags(write=False)
        self._vectors[text] = vector
        return vector
