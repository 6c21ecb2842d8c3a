"""The dense, keyword and graph searches, run concurrently; when one fails the others answer."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field

import numpy as np
import structlog

from retrieval.domain.chunk_identity import query_filter
from retrieval.domain.models import DENSE, GRAPH, KEYWORD
from retrieval.domain.ranking.fusion import Ranked
from retrieval.domain.stage_names import StageName
from retrieval.errors import BackendError, BackendNotConfiguredError, NamespaceNotFoundError
from retrieval.ports import Embedder, KeywordIndex, VectorIndex
from retrieval.ports.embedder import Vector
from retrieval.service.retrieval.pipeline.graph_search import GraphSearch
from retrieval.service.retrieval.pipeline.stage import PipelineState

log = structlog.get_logger("retrieval")

DEGRADABLE = (BackendError, BackendNotConfiguredError)
"""Failures one search may have while the other still answers; any other error (a missing
namespace, a bad filter) ends the retrieval."""


@dataclass
class Found:
    matches: Ranked
    timings: dict[str, float]
    query_vector: Vector | None = None
    vectors: dict[str, Vector] = field(default_factory=dict)


def elapsed_ms(begun: float) -> float:
    return (time.perf_counter() - begun) * 1e3


@dataclass(frozen=True, eq=False)
class Search:
    """Runs the searches the mode asks for, each returning ``plan.depth(top_k)`` candidates."""

    name = StageName.SEARCH

    embedder: Embedder
    index: VectorIndex
    keywords: KeywordIndex
    graph: GraphSearch

    async def run(self, state: PipelineState) -> PipelineState:
        searches: dict[str, Awaitable[Found]] = {}
        if state.plan.uses_dense:
            searches[DENSE] = self._dense(state)
        if state.plan.uses_keyword:
            searches[KEYWORD] = self._keyword(state)
        if state.plan.uses_graph:
            searches[GRAPH] = self._graph_search(state)
        outcomes = await asyncio.gather(*searches.values(), return_exceptions=True)
        found: dict[str, Found] = {}
        failed: dict[str, BaseException] = {}
        for source, outcome in zip(searches, outcomes, strict=True):
            if isinstance(outcome, Found):
                found[source] = outcome
            else:
                failed[source] = outcome
        for source, error in failed.items():
            if not found or not isinstance(error, DEGRADABLE):
                raise error
            log.warning("retrieve.source_failed", source=source, error=str(error))
        dense = found.get(DENSE)
        distinct = {match[0] for item in found.values() for match in item.matches}
        return state.updated(
            sources={source: item.matches for source, item in found.items()},
            candidates=(),
            counts={
                **state.counts,
                **{source: len(item.matches) for source, item in found.items()},
                StageName.SEARCH: len(distinct),
            },
            query_vector=dense.query_vector if dense else None,
            vectors=dense.vectors if dense else {},
            degraded=tuple(sorted(failed)),
            timings={
                **state.timings,
                **{k: v for f in found.values() for k, v in f.timings.items()},
            },
        )

    async def _dense(self, state: PipelineState) -> Found:
        """Searches with the state's query vector when a rewrite set one, else embeds."""
        begun = time.perf_counter()
        vector = state.query_vector
        if vector is None:
            vector = await self.embedder.embed_query(state.text)
        embedded = time.perf_counter()
        matches = await self.index.query(
            vector,
            top_k=state.plan.depth(state.query.top_k),
            namespace=state.namespace,
            filter=query_filter(state.query),
            include_values=state.plan.compares_vectors,
            include_metadata=False,
        )
        return Found(
            matches=matches,
            timings={StageName.EMBED: (embedded - begun) * 1e3, DENSE: elapsed_ms(embedded)},
            query_vector=vector,
            vectors={
                m.id: np.asarray(m.values, dtype=np.float32)
                for m in matches
                if m.values is not None
            },
        )

    async def _graph_search(self, state: PipelineState) -> Found:
        begun = time.perf_counter()
        ranked = await self.graph.ranked(state, state.plan.depth(state.query.top_k))
        return Found(matches=ranked, timings={GRAPH: elapsed_ms(begun)})

    async def _keyword(self, state: PipelineState) -> Found:
        """The keyword matches; in keyword mode, a namespace holding no entries is not found,
        as the vector index answers in the other modes."""
        begun = time.perf_counter()
        matches = await self.keywords.query(
            state.text,
            top_k=state.plan.depth(state.query.top_k),
            namespace=state.namespace,
            filter=query_filter(state.query),
        )
        alone = not state.plan.uses_dense
        if not matches and alone and not await self.keywords.count(state.namespace):
            raise NamespaceNotFoundError(state.namespace)
        return Found(matches=matches, timings={KEYWORD: elapsed_ms(begun)})
