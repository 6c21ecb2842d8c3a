"""Dropping the candidates a language model judges irrelevant to the query."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

import structlog

from retrieval.batching import gather_bounded, slices
from retrieval.domain.chat import ChatMessage
from retrieval.domain.ranking.relevance import Judgement, read_judgement
from retrieval.domain.stage_names import StageName
from retrieval.errors import BackendError, BackendNotConfiguredError, InvalidRequestError
from retrieval.ports.llm import Llm
from retrieval.service.retrieval.pipeline.stage import PipelineState
from retrieval.service.retrieval.pipeline.texts import CandidateTexts

log = structlog.get_logger("retrieval")

JUDGED_PER_MATCH = 2
"""Candidates judged per match asked for (``top_k``): room for the model to drop some."""
FILTER_PROMPT = (
    "You judge the passages a search engine found for a query. Name the passages that help "
    "answer the query. Answer with their numbers alone, separated by commas (for example: "
    "2, 5), or with the word none when no passage helps."
)
REPLY_TOKENS = 16
REPLY_TOKENS_PER_PASSAGE = 4


@dataclass(frozen=True, eq=False)
class LlmFilter:
    """Asks the language model which of the first ``JUDGED_PER_MATCH * top_k`` candidates
    help answer the query and keeps those, in their order; the candidates past them are
    dropped (every match returned was judged). Their texts are fetched here, in one round
    trip, and kept for ``Hydrate`` (a chunk of a version just replaced is judged in its
    current version, ``CandidateTexts``). The model reads ``llm_filter_batch`` numbered passages a
    call, ``llm_filter_concurrency`` calls at a time. A call that fails, or whose reply
    cannot be read, keeps its batch, with a warning and ``llm_filter`` in ``degraded``. A
    candidate without a stored text is left for ``Hydrate`` to skip."""

    name = StageName.LLM_FILTER

    llm: Llm
    texts: CandidateTexts

    async def run(self, state: PipelineState) -> PipelineState:
        plan = state.plan
        if not plan.llm_filter or not state.candidates:
            return state
        judged = state.candidates[: JUDGED_PER_MATCH * state.query.top_k]
        chunks = await self.texts.of(state, judged)
        batches = slices(
            [c.chunk_id for c in judged if c.chunk_id in chunks], plan.llm_filter_batch
        )
        judgements = await gather_bounded(
            [
                partial(self._judge, state.text, [chunks[chunk_id].content for chunk_id in batch])
                for batch in batches
            ],
            plan.llm_filter_concurrency,
        )
        kept = {
            batch[index]
            for batch, judgement in zip(batches, judgements, strict=True)
            for index in judgement.kept
        }
        understood = all(judgement.understood for judgement in judgements)
        return state.updated(
            candidates=tuple(c for c in judged if c.chunk_id in kept or c.chunk_id not in chunks),
            chunks=chunks,
            degraded=state.degraded if understood else (*state.degraded, StageName.LLM_FILTER),
        )

    async def _judge(self, query: str, passages: Sequence[str]) -> Judgement:
        try:
            reply = await self.llm.complete(
                [
                    ChatMessage(role="system", content=FILTER_PROMPT),
                    ChatMessage(role="user", content=numbered(query, passages)),
                ],
                max_tokens=REPLY_TOKENS + REPLY_TOKENS_PER_PASSAGE * len(passages),
            )
        except (BackendError, BackendNotConfiguredError, InvalidRequestError) as error:
            log.warning("retrieve.llm_filter_failed", error=str(error))
            return Judgement.unread(len(passages))
        judgement = read_judgement(reply.text, len(passages))
        if not judgement.understood:
            log.warning("retrieve.llm_filter_unreadable", reply=reply.text[:200])
        return judgement


def numbered(query: str, passages: Sequence[str]) -> str:
    """The query, then each passage after its number in brackets, from 1."""
    listed = "\n\n".join(f"[{number}] {text}" for number, text in enumerate(passages, 1))
    return f"Query: {query}\n\nPassages:\n\n{listed}"
