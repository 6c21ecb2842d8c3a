"""How long a written namespace settles, and the cache of results that waits for it."""

from __future__ import annotations

from retrieval.ports.index_lsns import IndexLsns
from retrieval.ports.namespace_generations import NamespaceGenerations
from retrieval.service.caching.freshness import NamespaceFreshness
from retrieval.service.caching.result_cache import InProcessResultCache, ResultCache, Uncached
from retrieval.settings import IndexBackend, Settings


def namespace_freshness(
    generations: NamespaceGenerations, lsns: IndexLsns, settings: Settings
) -> NamespaceFreshness:
    """When a written namespace settles: the embedded index shows writes at once; Pinecone's
    once its answers reach the writes' LSNs (within ``index_freshness_s`` where it answers
    none)."""
    pinecone = settings.index_backend is IndexBackend.PINECONE
    return NamespaceFreshness(generations, lsns, settings.index_freshness_s if pinecone else 0.0)


def result_cache(freshness: NamespaceFreshness, settings: Settings) -> ResultCache:
    """A cache keyed on each namespace's write generation, or none (0 entries)."""
    if settings.result_cache_entries == 0:
        return Uncached(freshness)
    return InProcessResultCache(
        freshness,
        max_entries=settings.result_cache_entries,
        ttl_s=settings.result_cache_ttl_s,
    )
