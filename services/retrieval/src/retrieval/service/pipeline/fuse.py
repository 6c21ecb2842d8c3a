from __future__ import annotations

from dataclasses import replace

from retrieval.domain.models import DENSE, FUSE_STAGE, FUSED, KEYWORD
from retrieval.domain.ranking.fusion import fuse
from retrieval.service.pipeline.stage import Candidate, PipelineState


class Fuse:
    """One ranking from the searches that answered: fused when both did, else the one list
    as it came (its own score: cosine for dense, BM25 for keyword)."""

    name = FUSE_STAGE

    async def run(self, state: PipelineState) -> PipelineState:
        if len(state.sources) < 2:
            single = next(iter(state.sources.values()), ())
            return replace(state, candidates=single)
        plan = state.plan
        fused = fuse(
            {
                source: [(c.chunk_id, c.score) for c in candidates]
                for source, candidates in state.sources.items()
            },
            plan.fusion,
            weights={DENSE: plan.dense_weight, KEYWORD: plan.keyword_weight},
            rrf_k=plan.rrf_k,
            label=FUSED,
        )
        return replace(state, candidates=tuple(map(Candidate._make, fused)))
