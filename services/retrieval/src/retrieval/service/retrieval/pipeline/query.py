from __future__ import annotations

import structlog

from retrieval.domain.query_text import QUERY_WINDOW_CHARS, fit_window
from retrieval.domain.stage_names import StageName
from retrieval.service.retrieval.pipeline.stage import PipelineState

log = structlog.get_logger("retrieval")


class FitQuery:
    """Cuts a query longer than the model's window (``query_max_words`` words, then
    ``QUERY_WINDOW_CHARS`` characters, which keep any text inside E5's 512 tokens) instead of
    refusing it; the result says so."""

    name = StageName.QUERY

    async def run(self, state: PipelineState) -> PipelineState:
        text, truncated = fit_window(state.text, state.plan.query_max_words)
        if truncated:
            log.info(
                "retrieve.query_truncated",
                words=state.plan.query_max_words,
                chars=QUERY_WINDOW_CHARS,
            )
        return state.updated(text=text, truncated=truncated)
