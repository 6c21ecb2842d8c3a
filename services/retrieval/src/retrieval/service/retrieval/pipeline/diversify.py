from __future__ import annotations

import numpy as np

from retrieval.domain.chunk_identity import document_of
from retrieval.domain.ranking.diversity import cap_per_group, mmr
from retrieval.domain.stage_names import StageName
from retrieval.service.retrieval.pipeline.stage import PipelineState


class Diversify:
    """At most ``max_per_document`` chunks of one document, then the ``top_k`` picked by
    maximal marginal relevance (plain ranking order when ``mmr_lambda`` is 1)."""

    name = StageName.DIVERSIFY

    async def run(self, state: PipelineState) -> PipelineState:
        plan = state.plan
        candidates = state.candidates
        if plan.max_per_document:
            kept = cap_per_group(
                [document_of(c.chunk_id) for c in candidates], plan.max_per_document
            )
            candidates = tuple(candidates[i] for i in kept)
        top_k = state.query.top_k
        if plan.diversifies and len(candidates) > 1:
            dimension = len(state.query_vector) if state.query_vector is not None else 0
            vectors = np.stack(
                [state.vectors.get(c.chunk_id, np.zeros(dimension, np.float32)) for c in candidates]
            )
            picks = mmr([c.score for c in candidates], vectors, k=top_k, lambda_=plan.mmr_lambda)
            candidates = tuple(candidates[i] for i in picks)
        return state.updated(candidates=candidates[:top_k])
