"""What every Llm must do. Subclass and provide a ``scripted`` fixture: a function that
takes a :data:`~retrieval_testkit.scripted_llm.Reply` and returns an Llm whose model
answers each request with ``reply(request)``, whether asked to ``complete`` or to
``stream``."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable

import pytest

from retrieval.domain.chat import ChatMessage, Completion
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


async def streamed(stream: AsyncGenerator[str | Completion, None]) -> tuple[list[str], Completion]:
    """The text pieces of ``stream`` and the completion it ends with; fails unless every
    piece is non-empty text and exactly one completion comes, last."""
    given = [piece async for piece in stream]
    assert given, "a stream ends with its completion"
    *pieces, last = given
    assert isinstance(last, Completion), f"the stream ended with {last!r}"
    assert all(isinstance(piece, str) and piece for piece in pieces), pieces
    return pieces, last


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

    async def test_a_stream_gives_the_reply_in_pieces_then_its_completion(
        self, scripted: Scripted
    ) -> None:
        reply = "Wet, cloudy weather spreads it [1].\nTee — „Blattfall“ ✓"
        pieces, completion = await streamed(scripted(lambda request: reply).stream(QUESTION))
        assert "".join(pieces) == reply
        assert len(pieces) > 1
        assert completion.text == reply
        assert completion.model
        assert completion.finish_reason == "stop"

    async def test_a_streamed_completion_is_the_one_complete_returns(
        self, scripted: Scripted
    ) -> None:
        llm = scripted(lambda request: "Copper fungicide [1], and shorter plucking rounds [2].")
        _, completion = await streamed(llm.stream(QUESTION, max_tokens=64))
        assert completion == await llm.complete(QUESTION, max_tokens=64)

    async def test_a_stream_carries_the_conversation_and_the_settings(
        self, scripted: Scripted
    ) -> None:
        conversation = [*QUESTION, ChatMessage(role="assistant", content="Wet weather [1].")]
        heard, _ = await streamed(scripted(transcript).stream(conversation))
        assert "".join(heard) == " | ".join(f"{m.role}: {m.content}" for m in conversation)
        given, _ = await streamed(
            scripted(settings).stream(QUESTION, max_tokens=9, temperature=0.5)
        )
        assert "".join(given) == "max_tokens=9 temperature=0.5"

    async def test_an_empty_reply_streams_no_piece(self, scripted: Scripted) -> None:
        pieces, completion = await streamed(scripted(lambda request: "").stream(QUESTION))
        assert pieces == []
        assert completion.text == ""

    @pytest.mark.parametrize(
        ("messages", "max_tokens"), [([], None), (QUESTION, 0)], ids=["no-messages", "max-tokens"]
    )
    async def test_a_stream_refuses_what_complete_refuses(
        self, scripted: Scripted, messages: list[ChatMessage], max_tokens: int | None
    ) -> None:
        stream = scripted(lambda request: "never").stream(messages, max_tokens=max_tokens)
        with pytest.raises(InvalidRequestError):
            await anext(stream)

    async def test_a_stream_closed_early_leaves_the_model_ready(self, scripted: Scripted) -> None:
        llm = scripted(lambda request: " ".join(["word"] * 50))
        stream = llm.stream(QUESTION)
        assert await anext(stream)
        await stream.aclose()
        assert (await llm.complete(QUESTION)).text.startswith("word word")
