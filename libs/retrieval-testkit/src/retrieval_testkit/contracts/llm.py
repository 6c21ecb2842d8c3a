"""What every Llm must do. Subclass and provide a ``scripted`` fixture: a function that
takes a :data:`~retrieval_testkit.scripted_llm.Reply` and returns an Llm whose model
answers each request with ``reply(request)``."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from retrieval.domain.chat import ChatMessage
from retrieval.errors import InvalidRequestError
from retrieval.ports.llm import Llm
from retrieval_testkit.scripted_llm import ChatRequest, Reply

Scripted = Callable[[Reply], Llm]

QUESTION = [
    ChatMessage(role="system", content="Answer from the passages; cite them as [n]."),
    ChatMessage(role="user", content="[1] Blister blight spreads in wet weather.\n\nWhy?"),
]


def transcript(request: ChatRequest) -> str:
    return " | ".join(f"{message.role}: {message.content}" for message in request.messages)


def settings(request: ChatRequest) -> str:
    return f"max_tokens={request.max_tokens} temperature={request.temperature}"


class LlmContract:
    async def test_returns_the_reply_text(self, scripted: Scripted) -> None:
        reply = "Wet, cloudy weather spreads it [1].\nTee — „Blattfall“ ✓"
        completion = await scripted(lambda request: reply).complete(QUESTION)
        assert completion.text == reply

    async def test_messages_reach_the_model_in_order_with_their_roles(
        self, scripted: Scripted
    ) -> None:
        conversation = [
            *QUESTION,
            ChatMessage(role="assistant", content="Wet weather [1]."),
            ChatMessage(role="user", content="And frost?"),
        ]
        completion = await scripted(transcript).complete(conversation)
        assert completion.text == " | ".join(f"{m.role}: {m.content}" for m in conversation)

    async def test_model_is_named(self, scripted: Scripted) -> None:
        llm = scripted(lambda request: "ok")
        completion = await llm.complete(QUESTION)
        assert llm.model
        assert completion.model

    async def test_max_tokens_and_temperature_reach_the_model(self, scripted: Scripted) -> None:
        llm = scripted(settings)
        given = await llm.complete(QUESTION, max_tokens=64, temperature=0.7)
        default = await llm.complete(QUESTION)
        assert given.text == "max_tokens=64 temperature=0.7"
        assert default.text == "max_tokens=None temperature=0.0"

    async def test_no_messages_is_an_invalid_request(self, scripted: Scripted) -> None:
        with pytest.raises(InvalidRequestError):
            await scripted(lambda request: "never").complete([])

    async def test_max_tokens_below_one_is_an_invalid_request(self, scripted: Scripted) -> None:
        with pytest.raises(InvalidRequestError):
            await scripted(lambda request: "never").complete(QUESTION, max_tokens=0)
