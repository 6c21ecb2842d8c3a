from __future__ import annotations

from dataclasses import replace

from retrieval.domain.models import EMBED_STAGE
from retrieval.ports import Embedder
from retrieval.service.pipeline.stage import PipelineState


class EmbedQuery:
    """Embeds the query text as a query (E5's ``query:`` side, never as a passage)."""

    name = EMBED_STAGE

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder

    async def run(self, state: PipelineState) -> PipelineState:
        return replace(state, query_vector=await self._embedder.embed_query(state.text))
