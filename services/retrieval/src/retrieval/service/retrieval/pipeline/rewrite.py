"""Rewriting a query whose best match is weak, and searching again with the rewrite.

Two rewriters: Rocchio's pseudo-relevance feedback on vectors (offline: the query vector
moved towards the vectors of the best candidates it found), and a language model asked for a
better search query (when one is configured). A rewriter that fails leaves the query as it
was; the result records each attempt, the query it searched with, and why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import structlog

from retrieval.domain.chat import ChatMessage, first_line
from retrieval.domain.models import DENSE, QueryRewrite
from retrieval.domain.query_text import fit_window, normalise
from retrieval.domain.ranking.feedback import rocchio
from retrieval.domain.stage_names import StageName
from retrieval.errors import BackendError, BackendNotConfiguredError, InvalidRequestError
from retrieval.ports import VectorIndex
from retrieval.ports.llm import Llm
from retrieval.service.retrieval.pipeline.stage import PipelineState, Stage

log = structlog.get_logger("retrieval")

REWRITE_FAILURES = (BackendError, BackendNotConfiguredError, InvalidRequestError)


class RewriteFailedError(Exception):
    """A rewriter could not give a usable query; the original stands."""


class Rewriter(Protocol):
    @property
    def method(self) -> str:
        """Names the rewriter in the result: rocchio or llm."""
        ...

    async def rewrite(self, state: PipelineState) -> PipelineState:
        """The state to search again with: a new ``text``, or a new ``query_vector`` (the
        text kept). Raises ``RewriteFailedError`` or a backend error when it cannot."""
        ...


def best_cosine(state: PipelineState) -> float | None:
    cosines = [c.scores[DENSE] for c in state.candidates if DENSE in c.scores]
    return max(cosines) if cosines else None


@dataclass(frozen=True, eq=False)
class RewriteWeakQuery:
    """When the best candidate's cosine is under ``rewrite_threshold`` (or nothing was
    found), rewrites the query and runs ``search`` (the searches and their fusion) again
    with the rewrite, then ``scoring`` (dense scores, threshold) against the query as asked,
    up to ``rewrite_attempts`` times while the result stays weak; each attempt rewrites the
    one before. The last search's candidates go on; a failed rewrite keeps the ones before
    it. A rewrite changes which chunks are found and how they rank, never what
    ``scores["dense"]`` and the threshold measure: the cosine to the query as asked."""

    name = StageName.REWRITE

    rewriter: Rewriter
    search: tuple[Stage, ...]
    scoring: tuple[Stage, ...]

    async def run(self, state: PipelineState) -> PipelineState:
        plan = state.plan
        if not plan.rewrite:
            return state
        previous = state
        for attempt in range(1, plan.rewrite_attempts + 1):
            best = best_cosine(state)
            if state.candidates and (best is None or best >= plan.rewrite_threshold):
                return state
            reason = (
                "nothing found"
                if not state.candidates
                else f"best cosine {best:.3f} < {plan.rewrite_threshold}"
            )
            try:
                rewritten = await self.rewriter.rewrite(previous)
                searched = await run_stages(self.search, cleared(rewritten))
                scored = await run_stages(self.scoring, as_asked(searched, state))
            except (RewriteFailedError, *REWRITE_FAILURES) as error:
                log.warning("retrieve.rewrite_failed", attempt=attempt, error=str(error))
                failed = self._record(attempt, previous.text, reason, error=str(error))
                return state.updated(rewrites=(*state.rewrites, failed))
            log.info("retrieve.rewritten", attempt=attempt, reason=reason)
            done = self._record(attempt, rewritten.text, reason, best=best_cosine(scored))
            state = scored.updated(rewrites=(*state.rewrites, done))
            previous = searched
        return state

    def _record(
        self,
        attempt: int,
        query: str,
        reason: str,
        *,
        best: float | None = None,
        error: str | None = None,
    ) -> QueryRewrite:
        return QueryRewrite(
            attempt=attempt,
            method=self.rewriter.method,
            query=query,
            reason=reason,
            error=error,
            best_cosine=best,
        )


async def run_stages(stages: Sequence[Stage], state: PipelineState) -> PipelineState:
    for stage in stages:
        state = await stage.run(state)
    return state


def cleared(state: PipelineState) -> PipelineState:
    """A rewritten query's state before it searches: nothing found yet."""
    return state.updated(sources={}, candidates=(), vectors={}, chunks={}, degraded=())


def as_asked(searched: PipelineState, asked: PipelineState) -> PipelineState:
    """What a rewritten search found, to be scored against the query as asked: its text and
    vector, and no cosine to the rewrite."""
    return searched.updated(
        text=asked.text,
        query_vector=asked.query_vector,
        candidates=tuple(
            c._replace(scores={k: v for k, v in c.scores.items() if k != DENSE})
            for c in searched.candidates
        ),
    )


@dataclass(frozen=True, eq=False)
class RocchioRewriter:
    """Moves the query vector towards the mean of the vectors of the best ``feedback``
    candidates: q' = alpha * q + beta * mean(d), normalised (Rocchio, with the classic
    SMART weights alpha 1, beta 0.75; no negative feedback). The text is kept, so the
    keyword search finds what it found."""

    method = "rocchio"

    index: VectorIndex
    feedback: int = 3
    alpha: float = 1.0
    beta: float = 0.75

    async def rewrite(self, state: PipelineState) -> PipelineState:
        if state.query_vector is None:
            raise RewriteFailedError("no query vector: the dense search did not run")
        top = [c.chunk_id for c in state.candidates[: self.feedback]]
        if not top:
            raise RewriteFailedError("no candidates to learn from")
        vectors = {i: state.vectors[i] for i in top if i in state.vectors}
        missing = [i for i in top if i not in vectors]
        if missing:
            fetched = await self.index.fetch(missing, state.namespace)
            vectors |= {i: np.asarray(r.values, dtype=np.float32) for i, r in fetched.items()}
        if not vectors:
            raise RewriteFailedError("the best candidates have no stored vectors")
        moved = rocchio(state.query_vector, list(vectors.values()), self.alpha, self.beta)
        return state.updated(query_vector=moved)


REWRITE_PROMPT = (
    "You rewrite search queries for a retrieval system over a knowledge base. The query "
    "below found only weak matches. Write one better search query with the same meaning: "
    "expand abbreviations, add the usual synonyms and technical terms, drop filler words. "
    "Answer with the query alone, on one line, without quotes or explanation."
)
MAX_REWRITE_TOKENS = 96


@dataclass(frozen=True, eq=False)
class LlmRewriter:
    """Asks the language model for a better search query."""

    method = "llm"

    llm: Llm

    async def rewrite(self, state: PipelineState) -> PipelineState:
        reply = await self.llm.complete(
            [
                ChatMessage(role="system", content=REWRITE_PROMPT),
                ChatMessage(role="user", content=state.text),
            ],
            max_tokens=MAX_REWRITE_TOKENS,
        )
        text, _ = fit_window(normalise(first_line(reply.text)), state.plan.query_max_words)
        if not text:
            raise RewriteFailedError("the model answered with no query")
        return state.updated(text=text, query_vector=None)
