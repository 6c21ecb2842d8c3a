from __future__ import annotations

from collections.abc import Iterator, Mapping

from retrieval.domain.models import DENSE, FUSED, GRAPH, KEYWORD
from retrieval.domain.ranking.fusion import Ranked, fuse
from retrieval.domain.stage_names import StageName
from retrieval.service.retrieval.pipeline.stage import Candidate, PipelineState


class Fuse:
    """One ranking from the searches that answered: fused when several did, else the one list
    as it came (its own score: cosine for dense, BM25 for keyword)."""

    name = StageName.FUSE

    async def run(self, state: PipelineState) -> PipelineState:
        if len(state.sources) < 2:
            return state.updated(candidates=tuple(as_found(state.sources)))
        plan = state.plan
        fused = fuse(
            state.sources,
            plan.fusion,
            weights={
                DENSE: plan.dense_weight,
                KEYWORD: plan.keyword_weight,
                GRAPH: plan.graph_weight,
            },
            rrf_k=plan.rrf_k,
            label=FUSED,
        )
        return state.updated(candidates=tuple(fused))


def as_found(sources: Mapping[str, Ranked]) -> Iterator[Candidate]:
    """The candidates of the one search that answered (if any), in its order."""
    for source, matches in sources.items():
        for match in matches:
            yield Candidate(match[0], match[1], {source: match[1]})
