from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from retrieval.domain.models import DENSE
from retrieval.domain.ranking.feedback import unit, unit_rows
from retrieval.domain.stage_names import StageName
from retrieval.ports import Embedder, VectorIndex
from retrieval.service.retrieval.pipeline.stage import Candidate, PipelineState


@dataclass(frozen=True, eq=False)
class CompleteDenseScores:
    """Gives candidates the keyword search found, and the dense search did not, their cosine
    similarity (and vector) from the vector index, so that every match reports
    ``scores['dense']``: all candidates when the threshold, MMR, the redundancy filter, the
    per-document cap or the reranker will look past the first ``top_k``, else just those;
    MMR and the redundancy filter also get the vectors the search did not return. Keyword
    mode embeds the query only when the threshold, MMR or the redundancy filter needs it. A
    candidate without a stored vector, or any candidate once the dense search has failed,
    gets no dense score."""

    name = StageName.DENSE_SCORES

    embedder: Embedder
    index: VectorIndex

    async def run(self, state: PipelineState) -> PipelineState:
        plan = state.plan
        needed = state.query.confidence_threshold > 0 or plan.compares_vectors
        if DENSE in state.degraded or not (needed or plan.uses_dense):
            return state
        looked_at = (
            state.candidates
            if needed or plan.max_per_document or plan.rerank
            else state.candidates[: state.query.top_k]
        )
        missing = [
            c.chunk_id
            for c in looked_at
            if DENSE not in c.scores or (plan.compares_vectors and c.chunk_id not in state.vectors)
        ]
        if not missing:
            return state
        query_vector = state.query_vector
        if query_vector is None:
            query_vector = await self.embedder.embed_query(state.text)
        records = await self.index.fetch(missing, state.namespace)
        fetched = [chunk_id for chunk_id in missing if chunk_id in records]
        vectors = dict(state.vectors)
        cosines: dict[str, float] = {}
        if fetched:
            matrix = np.array([records[chunk_id].values for chunk_id in fetched], np.float32)
            vectors.update(zip(fetched, matrix, strict=True))
            query_unit = unit(np.asarray(query_vector, dtype=np.float32))
            cosines = dict(zip(fetched, (unit_rows(matrix) @ query_unit).tolist(), strict=True))
        candidates = tuple(
            with_dense(c, cosines[c.chunk_id])
            if DENSE not in c.scores and c.chunk_id in cosines
            else c
            for c in state.candidates
        )
        return state.updated(candidates=candidates, vectors=vectors, query_vector=query_vector)


def with_dense(candidate: Candidate, cosine: float) -> Candidate:
    return candidate._replace(scores={**candidate.scores, DENSE: cosine})
