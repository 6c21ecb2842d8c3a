from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from retrieval.domain.models import SEARCH_STAGE
from retrieval.ports import MetadataFilter, VectorIndex
from retrieval.service.pipeline.stage import Candidate, PipelineState

DENSE = "dense"


def domain_filter(domains: Sequence[str]) -> MetadataFilter | None:
    return {"domain": {"$in": sorted(set(domains))}} if domains else None


class DenseSearch:
    """The ``top_k`` nearest chunks to the query vector in the namespace, within the domains."""

    name = SEARCH_STAGE

    def __init__(self, index: VectorIndex) -> None:
        self._index = index

    async def run(self, state: PipelineState) -> PipelineState:
        if state.query_vector is None:
            raise ValueError("dense search needs the query vector: run EmbedQuery before it")
        request = state.query
        found = await self._index.query(
            state.query_vector,
            top_k=request.top_k,
            namespace=state.namespace,
            filter=domain_filter(request.domains),
        )
        candidates = tuple(
            Candidate(chunk_id=match.id, score=match.score, scores={DENSE: match.score})
            for match in found
        )
        return replace(state, candidates=candidates)
