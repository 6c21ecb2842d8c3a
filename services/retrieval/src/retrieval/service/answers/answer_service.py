from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing

import structlog

from retrieval.domain.answers import Answer, AnswerDelta, AnswerDone, AnswerEvent, ContextResult
from retrieval.domain.chat import ChatMessage, Completion
from retrieval.domain.context import (
    BuiltContext,
    build_context,
    citation_coverage,
    parse_citations,
)
from retrieval.domain.models import RetrievalQuery, RetrievalResult, validated
from retrieval.domain.query_text import normalise
from retrieval.errors import InvalidRequestError
from retrieval.logging import correlated, correlation_scope
from retrieval.ports.llm import Llm
from retrieval.service.retrieval.retrieval_service import RetrievalService
from retrieval.service.timing import StageClock

log = structlog.get_logger("retrieval")

SYSTEM_PROMPT = (
    "You answer questions using only the numbered context passages you are given, never "
    "other knowledge. Cite every claim with the number of the passage it comes from in "
    "square brackets, such as [1], or [1][2] for several. If the context does not contain "
    "the answer, say that you do not know."
)


def answer_messages(context: BuiltContext, question: str) -> list[ChatMessage]:
    """The conversation asking the model to answer ``question`` from ``context``."""
    return [
        ChatMessage(role="system", content=SYSTEM_PROMPT),
        ChatMessage(role="user", content=f"Context:\n\n{context.text}\n\nQuestion: {question}"),
    ]


class AnswerService:
    """Answers a question from the chunks retrieval finds, citing them as [n]: the
    context holds at most ``budget_tokens`` (approximate) tokens, the answer at most
    ``max_answer_tokens``."""

    def __init__(
        self,
        retrieval: RetrievalService,
        llm: Llm,
        *,
        budget_tokens: int = 3000,
        max_answer_tokens: int = 512,
    ) -> None:
        if budget_tokens < 1:
            raise InvalidRequestError("must be at least 1", field="budget_tokens")
        if max_answer_tokens < 1:
            raise InvalidRequestError("must be at least 1", field="max_answer_tokens")
        self._retrieval = retrieval
        self._llm = llm
        self._budget_tokens = budget_tokens
        self._max_answer_tokens = max_answer_tokens

    async def build_context(self, query: RetrievalQuery) -> ContextResult:
        """Retrieve for ``query`` and number the matches that fit the budget. Raises what
        ``RetrievalService.retrieve_query`` raises."""
        result = await self._retrieval.retrieve_query(query)
        context = build_context(result.matches, budget_tokens=self._budget_tokens)
        return ContextResult(retrieval=result, context=context)

    async def answer(self, query: RetrievalQuery | str) -> Answer:
        """The model's answer to the query (a question alone: asked with the query's defaults)
        from the retrieved context, with the passages it cites. Without context (no matches,
        or none fits the budget) the model is not asked and the answer has ``answered=False``.

        Raises what ``RetrievalService.retrieve_query`` raises, and what the model raises:
        ``BackendNotConfiguredError`` without model settings, ``BackendError`` when it fails.
        """
        query = _as_query(query)
        with correlation_scope():
            found = await self.build_context(query)
            if not found.context.citations:
                return _unanswered(found)
            clock = StageClock()
            completion = await self._llm.complete(
                _messages(found), max_tokens=self._max_answer_tokens, temperature=0.0
            )
            return self._answered(found, completion, clock.elapsed_ms())

    def stream(self, query: RetrievalQuery | str) -> AsyncGenerator[AnswerEvent, None]:
        """``answer``, as the model writes it: an ``AnswerDelta`` for each piece of the text,
        then one ``AnswerDone`` with the answer, its citations resolved as ``answer``
        resolves them (without context, the ``AnswerDone`` alone). Raises what ``answer``
        raises, while iterating. Closing the generator (``aclose``, leaving
        ``contextlib.aclosing``, cancelling the task iterating it) stops the model's call;
        a loop left by ``break`` stops it once the generator is collected."""
        return correlated(self._streamed(_as_query(query)))

    async def _streamed(self, query: RetrievalQuery) -> AsyncGenerator[AnswerEvent, None]:
        found = await self.build_context(query)
        if not found.context.citations:
            yield AnswerDone(answer=_unanswered(found))
            return
        clock = StageClock()
        pieces = self._llm.stream(
            _messages(found), max_tokens=self._max_answer_tokens, temperature=0.0
        )
        async with aclosing(pieces):
            async for piece in pieces:
                if isinstance(piece, str):
                    yield AnswerDelta(text=piece)
                else:
                    yield AnswerDone(answer=self._answered(found, piece, clock.elapsed_ms()))

    def _answered(
        self, found: ContextResult, completion: Completion, generation_ms: float
    ) -> Answer:
        """The answer ``completion`` gives from ``found``, its citations resolved."""
        cited, unknown = parse_citations(completion.text, found.context.citations)
        answer = Answer(
            answered=True,
            text=completion.text,
            citations=tuple(cited),
            unknown_citations=tuple(unknown),
            confidence=citation_coverage(completion.text, citations=found.context.citations),
            context=found.context,
            model=completion.model,
            finish_reason=completion.finish_reason,
            generation_ms=generation_ms,
            **_retrieval_fields(found.retrieval),
        )
        log.info(
            "answer.done",
            model=answer.model,
            passages=len(found.context.citations),
            dropped=len(found.context.dropped),
            cited=len(answer.citations),
            unknown_citations=list(answer.unknown_citations),
            confidence=round(answer.confidence, 3),
            finish_reason=answer.finish_reason,
            generation_ms=answer.generation_ms,
        )
        return answer


def _as_query(query: RetrievalQuery | str) -> RetrievalQuery:
    """``query``; a question alone asked with the query's defaults."""
    return validated(RetrievalQuery, query=query) if isinstance(query, str) else query


def _messages(found: ContextResult) -> list[ChatMessage]:
    return answer_messages(found.context, normalise(found.retrieval.query))


def _unanswered(found: ContextResult) -> Answer:
    log.info("answer.no_context", dropped=len(found.context.dropped))
    return Answer(
        answered=False,
        text="",
        confidence=0.0,
        context=found.context,
        model=None,
        **_retrieval_fields(found.retrieval),
    )


def _retrieval_fields(result: RetrievalResult) -> dict[str, object]:
    return {
        "query": result.query,
        "namespace": result.namespace,
        "retrieval_timings": result.timings,
        "query_truncated": result.query_truncated,
        "degraded": result.degraded,
    }
