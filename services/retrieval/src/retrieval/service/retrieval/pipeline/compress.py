from __future__ import annotations

from retrieval.domain.ranking.compression import non_redundant
from retrieval.domain.stage_names import StageName
from retrieval.service.retrieval.pipeline.stage import PipelineState


class Compress:
    """Drops a candidate whose stored vector's cosine similarity to a better-ranked candidate
    kept is at least ``redundancy_threshold`` (1: keeps all). A candidate without a vector
    in ``state.vectors`` is kept. Relevance is filtered by ``ScoreThreshold``, not here."""

    name = StageName.COMPRESS

    async def run(self, state: PipelineState) -> PipelineState:
        if not state.plan.compresses:
            return state
        candidates = state.candidates
        kept = non_redundant(
            [state.vectors.get(c.chunk_id) for c in candidates], state.plan.redundancy_threshold
        )
        return state.updated(candidates=tuple(candidates[i] for i in kept))
