from __future__ import annotations

from dataclasses import replace

from retrieval.domain.models import THRESHOLD_STAGE
from retrieval.service.pipeline.stage import PipelineState


class ScoreThreshold:
    """Drops candidates whose ranking score is under the query's ``confidence_threshold``.

    While the dense search is the only source, the ranking score is the cosine similarity.
    """

    name = THRESHOLD_STAGE

    async def run(self, state: PipelineState) -> PipelineState:
        floor = state.query.confidence_threshold
        kept = tuple(c for c in state.candidates if c.score >= floor)
        return replace(state, candidates=kept)
