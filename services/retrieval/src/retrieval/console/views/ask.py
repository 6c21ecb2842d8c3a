"""The ask page: the configured chat model's answer from what retrieval finds, streamed as the
model writes it, then as Markdown with the passages it cites (``retrieval ask``); without a
chat model, the settings it needs."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass

import structlog
from markupsafe import escape
from starlette.requests import Request
from starlette.responses import Response

from retrieval.console.access import check_read
from retrieval.console.rendering import Renderer, status_of
from retrieval.console.views.query import retrieval_query
from retrieval.domain.answers import AnswerDelta, AnswerEvent
from retrieval.errors import RetrievalError
from retrieval.service.answers.answer_service import AnswerService
from retrieval.settings import Settings

log = structlog.get_logger("console")

CHAT_SETTINGS = ("llm_base_url", "llm_model")
"""The settings without which there is no chat model to ask."""
MODEL_FAILED = "The answer stops here: the chat model failed, and the console's log tells why."


def missing_chat_settings(settings: Settings) -> list[str]:
    """The environment variables of the chat model's settings that are not set."""
    prefix = str(Settings.model_config.get("env_prefix", ""))
    return [(prefix + name).upper() for name in CHAT_SETTINGS if not getattr(settings, name)]


@dataclass(frozen=True, eq=False)
class AskPage:
    answers: AnswerService
    settings: Settings
    render: Renderer

    async def ask(self, request: Request) -> Response:
        params = request.query_params
        missing = missing_chat_settings(self.settings)
        context: dict[str, object] = {
            "form": params,
            "default_namespace": self.settings.default_namespace,
            "missing": missing,
            "problem": None,
        }
        if missing or not params.get("query", "").strip():
            return self.render.page(request, "ask.html", context)
        try:
            query = retrieval_query(params)
            check_read(query.namespace or self.settings.default_namespace)
            events = self.answers.stream(query)
            first = await anext(events)
        except RetrievalError as error:
            status, problem = status_of(error)
            return self.render.page(request, "ask.html", {**context, "problem": problem}, status)
        return self.render.streamed(request, "ask.html", context, self._written(first, events))

    async def _written(
        self, first: AnswerEvent, events: AsyncGenerator[AnswerEvent, None]
    ) -> AsyncIterator[str]:
        """The answer's HTML: its text piece by piece as the model writes it, then the whole
        answer as Markdown (the style sheet hides the plain one) and what it cites; a model
        that fails midway is told where the answer stops, after the plain text it wrote."""
        yield '<p class="answer-text">'
        ending: dict[str, object] = {"answer": None, "problem": None}
        try:
            async with aclosing(events):
                event = first
                while isinstance(event, AnswerDelta):
                    yield str(escape(event.text))
                    event = await anext(events)
                ending["answer"] = event.answer
        except (StopAsyncIteration, RetrievalError) as error:
            log.error("console.answer_failed", error=str(error) or type(error).__name__)
            ending["problem"] = MODEL_FAILED
        yield "</p>"
        yield self.render.fragment("_answer_end.html", ending)
