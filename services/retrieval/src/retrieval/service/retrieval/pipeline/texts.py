"""The texts of a retrieval's candidates, as the stages that read them (second hop, rerank,
the model's filter, the fetch) see them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from retrieval.domain.chunk_identity import query_filter, vector_metadata
from retrieval.domain.filters import matches as matches_filter
from retrieval.domain.models import RagChunk
from retrieval.ports import ChunkRepository
from retrieval.service.retrieval.current_versions import CurrentVersions
from retrieval.service.retrieval.pipeline.stage import Candidate, PipelineState, with_texts


@dataclass(frozen=True, eq=False)
class CandidateTexts:
    chunks: ChunkRepository
    versions: CurrentVersions

    async def of(
        self, state: PipelineState, candidates: Sequence[Candidate]
    ) -> dict[str, RagChunk]:
        """``state.chunks`` with the texts of ``candidates`` no stage has fetched yet, in one
        ``get_many``; a chunk without a stored text, of a version just replaced, maps to its
        document's current version (``retrieval.service.retrieval.current_versions``) if the query's
        filter still holds it, and any other stays absent."""
        texts = await with_texts(state, candidates, self.chunks)
        missing = [c.chunk_id for c in candidates if c.chunk_id not in texts]
        if not missing:
            return texts
        standing_in = await self.versions.standing_in(missing, state.namespace)
        wanted = query_filter(state.query)
        return {
            **{
                chunk_id: chunk
                for chunk_id, chunk in standing_in.items()
                if matches_filter(wanted, vector_metadata(chunk))
            },
            **texts,
        }
