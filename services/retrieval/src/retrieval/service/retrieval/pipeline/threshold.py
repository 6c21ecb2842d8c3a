from __future__ import annotations

from retrieval.domain.models import DENSE, meets_threshold
from retrieval.domain.stage_names import StageName
from retrieval.service.retrieval.pipeline.stage import PipelineState


class ScoreThreshold:
    """Drops candidates whose cosine similarity to the query is under ``confidence_threshold``.

    The threshold always applies to the dense score, in every mode and fusion: fused and
    keyword scores have no fixed scale, a cosine does. A positive threshold therefore drops a
    candidate whose cosine is unknown (no stored vector); a threshold of 0 keeps it.
    """

    name = StageName.THRESHOLD

    async def run(self, state: PipelineState) -> PipelineState:
        floor = state.query.confidence_threshold
        kept = tuple(c for c in state.candidates if meets_threshold(c.scores.get(DENSE), floor))
        return state.updated(candidates=kept)
