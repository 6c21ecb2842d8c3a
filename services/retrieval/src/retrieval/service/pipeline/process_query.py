from __future__ import annotations

from dataclasses import replace

from retrieval.domain.query_text import normalise
from retrieval.service.pipeline.stage import PipelineState


class ProcessQuery:
    """Normalises the query text the later stages use (``retrieval.domain.query_text``)."""

    name = "query"

    async def run(self, state: PipelineState) -> PipelineState:
        return replace(state, text=normalise(state.query.query))
