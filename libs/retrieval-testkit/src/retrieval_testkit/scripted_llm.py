"""A chat model whose replies a test writes: a function of what it was asked."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass

from retrieval.domain.chat import ChatMessage, Completion
from retrieval.errors import InvalidRequestError

DEFAULT_REPLY = "Answer [1]."


@dataclass(frozen=True)
class ChatRequest:
    """What a chat model was asked."""

    messages: tuple[ChatMessage, ...]
    max_tokens: int | None
    temperature: float


Reply = Callable[[ChatRequest], str]
"""The text a scripted model answers to a request; it may raise a ``RetrievalError`` instead."""


def constant_reply(request: ChatRequest) -> str:
    return DEFAULT_REPLY


def word_count(texts: Sequence[str]) -> int:
    """The token counts the fakes report: words separated by whitespace."""
    return sum(len(text.split()) for text in texts)


def pieces(text: str) -> list[str]:
    """The pieces the fakes stream ``text`` in: each word with the whitespace after it."""
    return re.findall(r"\S+\s*|\s+", text)


class ScriptedLlm:
    """Answers each call with ``reply(request)`` and keeps every request in ``calls``; a
    stream gives the reply a word at a time, and ``streams_cut`` counts the streams closed
    before they ended."""

    def __init__(self, reply: Reply = constant_reply, *, model: str = "scripted-model") -> None:
        self.reply = reply
        self._model = model
        self.calls: list[ChatRequest] = []
        self.streams_cut = 0

    @property
    def model(self) -> str:
        return self._model

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> Completion:
        if not messages:
            raise InvalidRequestError("at least one message is needed", field="messages")
        if max_tokens is not None and max_tokens < 1:
            raise InvalidRequestError("must be at least 1", field="max_tokens")
        request = ChatRequest(tuple(messages), max_tokens, temperature)
        self.calls.append(request)
        text = self.reply(request)
        return Completion(
            text=text,
            model=self._model,
            finish_reason="stop",
            prompt_tokens=word_count([message.content for message in messages]),
            completion_tokens=word_count([text]),
        )

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> AsyncGenerator[str | Completion, None]:
        completion = await self.complete(messages, max_tokens=max_tokens, temperature=temperature)
        ended = False
        try:
            for piece in pieces(completion.text):
                await asyncio.sleep(0)
                yield piece
            yield completion
            ended = True
        finally:
            if not ended:
                self.streams_cut += 1
