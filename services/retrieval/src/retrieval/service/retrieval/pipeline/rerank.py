from __future__ import annotations

from dataclasses import dataclass

import structlog

from retrieval.domain.models import RERANK
from retrieval.domain.stage_names import StageName
from retrieval.errors import BackendError, BackendNotConfiguredError
from retrieval.ports.reranker import Reranker
from retrieval.service.retrieval.pipeline.stage import Candidate, PipelineState
from retrieval.service.retrieval.pipeline.texts import CandidateTexts

log = structlog.get_logger("retrieval")


@dataclass(frozen=True, eq=False)
class Rerank:
    """Reorders the first ``rerank_depth`` candidates with a cross-encoder that reads each
    chunk's text with the query; the candidates past them are dropped. Their texts are
    fetched here, in one round trip, and kept for ``Hydrate`` (a chunk of a version just
    replaced is read in its current version, ``CandidateTexts``). When the reranker fails (or
    none is configured) the incoming order stays, with a warning and ``rerank`` in
    ``degraded``."""

    name = StageName.RERANK

    reranker: Reranker
    texts: CandidateTexts

    async def run(self, state: PipelineState) -> PipelineState:
        if not state.plan.rerank or not state.candidates:
            return state
        considered = state.candidates[: state.plan.rerank_depth]
        chunks = await self.texts.of(state, considered)
        present = [c for c in considered if c.chunk_id in chunks]
        try:
            ranked = await self.reranker.rerank(
                state.text, [chunks[c.chunk_id].content for c in present], len(present)
            )
        except (BackendError, BackendNotConfiguredError) as error:
            log.warning("retrieve.rerank_failed", error=str(error))
            return state.updated(chunks=chunks, degraded=(*state.degraded, RERANK))
        reordered = tuple(rescored(present[item.index], item.score) for item in ranked)
        return state.updated(candidates=reordered, chunks=chunks)


def rescored(candidate: Candidate, score: float) -> Candidate:
    return candidate._replace(score=score, scores={**candidate.scores, RERANK: score})
