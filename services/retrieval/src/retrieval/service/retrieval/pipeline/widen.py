from __future__ import annotations

import asyncio
from dataclasses import dataclass

from retrieval.domain.neighbours import neighbour_ids, widened
from retrieval.domain.stage_names import StageName
from retrieval.ports import ChunkRepository
from retrieval.service.retrieval.pipeline.stage import PipelineState


@dataclass(frozen=True, eq=False)
class Widen:
    """Small to big: each match's content becomes the text of the chunks up to ``neighbours``
    positions either side of it in its document (``retrieval.domain.neighbours.widened``).

    Costs one ``chunk_ids`` listing per distinct document of the matches (at most ``top_k``,
    run at once: chunk ids end in a digest, so a neighbour's id cannot be computed) and one
    ``get_many`` of the neighbours whose text no stage has fetched yet."""

    name = StageName.WIDEN

    chunks: ChunkRepository

    async def run(self, state: PipelineState) -> PipelineState:
        radius = state.plan.neighbours
        if not radius or not state.matches:
            return state
        namespace = state.namespace
        documents = sorted({match.document_id for match in state.matches})
        listings = await asyncio.gather(
            *(self.chunks.chunk_ids(document, namespace) for document in documents)
        )
        wanted = neighbour_ids(state.matches, dict(zip(documents, listings, strict=True)), radius)
        missing = [chunk_id for chunk_id in wanted if chunk_id not in state.chunks]
        fetched = {
            **state.chunks,
            **(await self.chunks.get_many(missing, namespace) if missing else {}),
        }
        neighbours = [fetched[chunk_id] for chunk_id in wanted if chunk_id in fetched]
        return state.updated(matches=tuple(widened(state.matches, neighbours, radius)))
