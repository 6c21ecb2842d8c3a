from __future__ import annotations

from dataclasses import replace

import structlog

from retrieval.domain.models import QUERY_STAGE
from retrieval.domain.query_text import truncate_words
from retrieval.service.pipeline.stage import PipelineState

log = structlog.get_logger("retrieval")


class FitQuery:
    """Cuts a query longer than the model's window (``query_max_words`` words, a bound that
    keeps English text inside E5's 512 tokens) instead of refusing it; the result says so."""

    name = QUERY_STAGE

    async def run(self, state: PipelineState) -> PipelineState:
        text, truncated = truncate_words(state.text, state.plan.query_max_words)
        if truncated:
            log.info("retrieve.query_truncated", words=state.plan.query_max_words)
        return replace(state, text=text, truncated=truncated)
