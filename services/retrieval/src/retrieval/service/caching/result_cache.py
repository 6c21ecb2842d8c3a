"""Retrieval results kept in process for a short time, retired on every replica as soon as a
write to their namespace completes.

Each namespace has a generation (``NamespaceGenerations``, shared by every replica through
MongoDB) that writers advance AFTER they change the stores. ``InProcessResultCache.through``
reads the generation once, BEFORE computing, and keys the result on it with everything of the
request that shapes the answer: the normalised text, the domains as a set, ``top_k``, the
threshold, the options, the namespace.

Why no result is served after a write that changed it completed. Let W change the stores,
then advance the generation to ``g``:

- a result is stored under generation ``h`` only by a call that read ``h`` before computing;
- generations only grow, one step per advance, so a read that returns ``g`` or more happens
  after W's advance, which happens after W's changes: every result stored under ``g`` or more
  was computed entirely from stores that already held W;
- a call that starts after W completed reads ``g`` or more (the advance was acknowledged by a
  majority; the read is at majority read concern on the primary), so it is served a result
  stored under ``g`` or more, or computes one: either way, one that includes W.

A result computed while W was under way is stored under a generation below ``g`` and is never
served after W completes. The order is what makes this hold: a writer that advanced BEFORE
changing the stores would let a call read the new generation, compute from the old data and
store that under the new generation, where every replica would serve it after the write
completed, until its TTL. So the ingestion service advances after each of its changes to the
stores (a committed group with its stale chunks removed, a rollback, a deletion, a repair):
once per operation is enough, after its last change and before it returns.

What staleness remains:

- none for a write completed before the call read the generation; a write still under way
  may or may not be seen, as without the cache;
- a writer that stopped between its changes and its advance (a crash, a failed advance):
  results computed before its write are served until their TTL (``ttl_s``) ends or the next
  advance of the namespace (its next write, or ``reconcile``);
- a store that makes writes visible late (Pinecone's indexes are eventually consistent): a
  call may compute from an index that does not show the write yet, after the advance. Such a
  result is returned but not kept: nothing computed while the namespace is settling (until
  the index answers at or above the LSN stored with the generation; without LSNs, within
  ``RETRIEVAL_INDEX_FRESHNESS_S`` of this replica first seeing its generation) is stored
  (``retrieval.service.caching.freshness``), so once the index shows the write no replica
  serves an answer without it;
- a primary cut off from its replica set answers with the generation it holds until it
  steps down (within the election timeout).

A generation must never go back: deleting a namespace advances its counter and never removes
it, since entries kept under a generation that is read again would be served.

Costs: one MongoDB read (``current``, by ``_id``) per call, hit or miss; a hit costs nothing
more. When that read fails the call computes and nothing is stored (a warning is logged).
Results with a failed search source (``degraded``) are not kept. Two identical calls that
miss at the same moment both compute. Each replica holds its own ``max_entries`` entries,
least recently used evicted first, each for at most ``ttl_s`` seconds.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Protocol

import structlog
from cachetools import TTLCache

from retrieval.domain.models import RetrievalQuery, RetrievalResult, StageTimings
from retrieval.domain.query_text import normalise
from retrieval.domain.stage_names import StageName
from retrieval.errors import RetrievalError
from retrieval.service.caching.freshness import NamespaceFreshness
from retrieval.service.timing import StageClock

log = structlog.get_logger("result_cache")

Compute = Callable[[], Awaitable[RetrievalResult]]


def cache_key(request: RetrievalQuery, namespace: str, generation: int) -> Hashable:
    """Everything of a request that shapes its result, with the namespace and its generation."""
    return (
        normalise(request.query),
        tuple(sorted(set(request.domains))),
        request.source_prefix,
        request.section,
        request.top_k,
        request.confidence_threshold,
        tuple(sorted(request.options.model_dump(mode="json").items())),
        namespace,
        generation,
    )


class ResultCache(Protocol):
    """What ``RetrievalService`` asks of a result cache."""

    async def through(
        self, request: RetrievalQuery, namespace: str, compute: Compute
    ) -> RetrievalResult: ...


class InProcessResultCache:
    def __init__(
        self,
        freshness: NamespaceFreshness,
        *,
        max_entries: int = 1024,
        ttl_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        if ttl_s <= 0:
            raise ValueError("ttl_s must be positive")
        self._freshness = freshness
        self._entries: TTLCache[Hashable, RetrievalResult] = TTLCache(
            maxsize=max_entries, ttl=ttl_s, timer=clock
        )

    async def through(
        self, request: RetrievalQuery, namespace: str, compute: Compute
    ) -> RetrievalResult:
        """The result of ``compute()`` for this request in ``namespace`` (already resolved
        from the request and the default), from the cache when an identical request computed
        it since the namespace's last completed write. A cached result says ``cached=True``,
        carries this request's query as asked, and this call's timings: the ``cache`` stage
        (reading the generation and the entry) and the total.
        Errors of ``compute`` propagate and are not kept."""
        clock = StageClock()
        try:
            generation = await self._freshness.current(namespace)
        except RetrievalError as error:
            log.warning(
                "result_cache.generation_unavailable", namespace=namespace, error=str(error)
            )
            return await compute()
        key = cache_key(request, namespace, generation)
        kept = self._entries.get(key)
        if kept is not None:
            spent = clock.elapsed_ms()
            timings = StageTimings(stages={StageName.CACHE: spent}, total_ms=spent)
            return kept.model_copy(
                update={"cached": True, "query": request.query, "timings": timings}
            )
        result, settled = await self._freshness.computed(namespace, compute)
        if settled and not result.degraded:
            self._entries[key] = result
        return result


@dataclass(frozen=True, eq=False)
class Uncached:
    """The result cache of a deployment that keeps none: every call computes. Over an index
    that shows writes late, each call still reads the namespace's generation and computes
    through ``freshness``, for the chunk text cache to know whether the namespace is settling."""

    freshness: NamespaceFreshness

    async def through(
        self, request: RetrievalQuery, namespace: str, compute: Compute
    ) -> RetrievalResult:
        if not self.freshness.settle_s:
            return await compute()
        try:
            await self.freshness.current(namespace)
        except RetrievalError as error:
            log.warning(
                "result_cache.generation_unavailable", namespace=namespace, error=str(error)
            )
        result, _ = await self.freshness.computed(namespace, compute)
        return result
