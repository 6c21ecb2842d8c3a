"""The OpenAI-compatible chat adapter streaming over HTTP: pieces as the server sends them,
retries only before the first piece, typed errors, and a stream closed by its reader closes
the connection."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator

import pytest

from retrieval.adapters.openai.chat_llm import OpenAiChatLlm
from retrieval.domain.chat import ChatMessage, Completion
from retrieval.errors import (
    BackendError,
    BackendTimeoutError,
    BackendUnavailableError,
    InvalidRequestError,
    NotAuthorisedError,
    RetrievalError,
)
from retrieval_testkit.contracts.llm import streamed
from retrieval_testkit.openai_standin import Fault, OpenAiStandIn

KEY = "sk-standin-secret"
ATTEMPTS = 3
QUESTION = [
    ChatMessage(role="system", content="Answer from the passages."),
    ChatMessage(role="user", content="[1] Blister blight spreads in wet weather.\n\nWhy?"),
]
REPLY = "Wet weather spreads blister blight [1], so growers spray copper fungicide."


@pytest.fixture
def standin() -> Iterator[OpenAiStandIn]:
    with OpenAiStandIn(api_key=KEY, reply=lambda request: REPLY) as running:
        yield running


@pytest.fixture
async def llm(standin: OpenAiStandIn) -> AsyncIterator[OpenAiChatLlm]:
    llm = OpenAiChatLlm(
        standin.base_url,
        KEY,
        standin.model,
        request_timeout_s=0.5,
        call_timeout_s=3.0,
        max_attempts=ATTEMPTS,
    )
    yield llm
    await llm.close()


async def read(llm: OpenAiChatLlm) -> tuple[list[str], Completion]:
    return await streamed(llm.stream(QUESTION))


async def read_into(
    given: list[str | Completion], llm_stream: AsyncIterator[str | Completion]
) -> None:
    async for piece in llm_stream:
        given.append(piece)


def events(*payloads: object) -> str:
    return "".join(f"data: {json.dumps(payload)}\n\n" for payload in payloads)


def chunk(content: str | None = None, finish_reason: str | None = None) -> dict:
    delta = {} if content is None else {"content": content}
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}


# What is sent and read


async def test_a_stream_asks_for_server_sent_events_with_usage(
    llm: OpenAiChatLlm, standin: OpenAiStandIn
) -> None:
    pieces, completion = await read(llm)
    [request] = standin.requests
    assert request.body["stream"] is True
    assert request.body["stream_options"] == {"include_usage": True}
    assert "".join(pieces) == REPLY
    assert completion == Completion(
        text=REPLY,
        model="standin-model",
        finish_reason="stop",
        prompt_tokens=12,
        completion_tokens=11,
    )


async def test_pieces_come_while_the_model_is_still_writing(
    llm: OpenAiChatLlm, standin: OpenAiStandIn
) -> None:
    standin.inject(Fault(hold_after=1))
    stream = llm.stream(QUESTION)
    first = await asyncio.wait_for(anext(stream), timeout=2)
    assert first == "Wet "
    standin.release()
    rest = [piece async for piece in stream]
    assert first + "".join(p for p in rest if isinstance(p, str)) == REPLY
    [ended] = await asyncio.to_thread(standin.ended_streams)
    assert not ended.hung_up


async def test_servers_that_send_no_done_or_no_usage_are_read(
    llm: OpenAiChatLlm, standin: OpenAiStandIn
) -> None:
    body = events(chunk("Shade "), chunk("trees [1]."), chunk(None, "length"))
    standin.inject(Fault(body=body, content_type="text/event-stream"))
    pieces, completion = await read(llm)
    assert pieces == ["Shade ", "trees [1]."]
    assert completion == Completion(
        text="Shade trees [1].", model="standin-model", finish_reason="length"
    )


# A reader that stops closes the connection


async def test_closing_the_stream_closes_the_connection(
    llm: OpenAiChatLlm, standin: OpenAiStandIn
) -> None:
    standin.inject(Fault(hold_after=1))
    stream = llm.stream(QUESTION)
    assert await anext(stream) == "Wet "
    await stream.aclose()
    [ended] = await asyncio.to_thread(standin.ended_streams)
    assert ended.hung_up
    assert ended.sent == 1 < ended.total


async def test_breaking_out_of_the_loop_closes_the_connection(
    llm: OpenAiChatLlm, standin: OpenAiStandIn
) -> None:
    standin.inject(Fault(hold_after=1))
    async for piece in llm.stream(QUESTION):
        assert piece == "Wet "
        break
    [ended] = await asyncio.to_thread(standin.ended_streams)
    assert ended.hung_up


async def test_cancelling_the_reader_closes_the_connection(
    llm: OpenAiChatLlm, standin: OpenAiStandIn
) -> None:
    standin.inject(Fault(hold_after=1))
    first = asyncio.Event()

    async def reader() -> None:
        async for _ in llm.stream(QUESTION):
            first.set()

    task = asyncio.create_task(reader())
    await asyncio.wait_for(first.wait(), timeout=2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    [ended] = await asyncio.to_thread(standin.ended_streams)
    assert ended.hung_up
    assert ended.sent == 1


async def test_the_next_call_after_a_closed_stream_is_answered(
    llm: OpenAiChatLlm, standin: OpenAiStandIn
) -> None:
    standin.inject(Fault(hold_after=1))
    stream = llm.stream(QUESTION)
    await anext(stream)
    await stream.aclose()
    pieces, _ = await read(llm)
    assert "".join(pieces) == REPLY


# Retried before the first piece, never after


@pytest.mark.parametrize(
    "fault",
    [
        Fault(status=500),
        Fault(status=429, retry_after="0"),
        Fault(disconnect=True),
        Fault(cut_after=0),
    ],
    ids=["500", "429", "hung-up", "cut-before-any-piece"],
)
async def test_a_failure_before_the_first_piece_is_retried(
    llm: OpenAiChatLlm, standin: OpenAiStandIn, fault: Fault
) -> None:
    standin.inject(fault, count=ATTEMPTS - 1)
    pieces, _ = await read(llm)
    assert "".join(pieces) == REPLY
    assert len(standin.requests) == ATTEMPTS


async def test_a_stream_cut_after_a_piece_fails_and_is_not_tried_again(
    llm: OpenAiChatLlm, standin: OpenAiStandIn
) -> None:
    standin.inject(Fault(cut_after=2), count=ATTEMPTS)
    given: list[str | Completion] = []
    with pytest.raises(BackendUnavailableError) as raised:
        await read_into(given, llm.stream(QUESTION))
    assert given == ["Wet ", "weather "]
    assert "standin-model" in str(raised.value)
    assert len(standin.requests) == 1


async def test_unavailable_every_time_fails_after_the_attempts(
    llm: OpenAiChatLlm, standin: OpenAiStandIn
) -> None:
    standin.inject(Fault(status=503), count=ATTEMPTS + 1)
    with pytest.raises(BackendUnavailableError, match="503"):
        await read(llm)
    assert len(standin.requests) == ATTEMPTS


# Refusals and malformed replies: typed, never retried


@pytest.mark.parametrize(
    ("status", "expected"),
    [(400, InvalidRequestError), (401, NotAuthorisedError), (404, BackendError)],
)
async def test_a_refusal_is_translated_and_not_retried(
    llm: OpenAiChatLlm, standin: OpenAiStandIn, status: int, expected: type[RetrievalError]
) -> None:
    standin.inject(Fault(status=status), count=ATTEMPTS)
    with pytest.raises(expected) as raised:
        await read(llm)
    assert type(raised.value) is expected
    assert str(status) in str(raised.value)
    assert len(standin.requests) == 1


@pytest.mark.parametrize(
    ("body", "content_type", "problem"),
    [
        (json.dumps({"choices": []}), "application/json", "not an event stream (application/json)"),
        ("data: {not json}\n\n", "text/event-stream", "malformed reply: not JSON"),
        (
            events({"choices": [{"delta": {"content": 42}}]}),
            "text/event-stream",
            "choices.0.delta.content: Input should be a valid string",
        ),
        (
            events(chunk("Wet "), {"error": {"message": "the model overloaded"}}),
            "text/event-stream",
            "the model overloaded",
        ),
    ],
    ids=["json", "not-json", "wrong-type", "error-event"],
)
async def test_a_malformed_stream_is_a_backend_error_not_retried(
    llm: OpenAiChatLlm, standin: OpenAiStandIn, body: str, content_type: str, problem: str
) -> None:
    standin.inject(Fault(body=body, content_type=content_type), count=ATTEMPTS)
    with pytest.raises(BackendError) as raised:
        await read(llm)
    assert type(raised.value) is BackendError
    assert problem in str(raised.value)
    assert len(standin.requests) == 1


async def test_a_stream_that_ends_unfinished_is_unavailable(
    llm: OpenAiChatLlm, standin: OpenAiStandIn
) -> None:
    standin.inject(Fault(body=events(chunk("Wet ")), content_type="text/event-stream"))
    with pytest.raises(BackendUnavailableError, match="before the model finished"):
        await read(llm)
    assert len(standin.requests) == 1


# Time bounds


async def test_a_stall_after_a_piece_times_out_without_a_retry(
    llm: OpenAiChatLlm, standin: OpenAiStandIn
) -> None:
    standin.inject(Fault(hold_after=1))
    with pytest.raises(BackendTimeoutError, match=r"no answer within 0\.5 s"):
        await read(llm)
    assert len(standin.requests) == 1


async def test_a_stream_ends_within_the_calls_bound(standin: OpenAiStandIn) -> None:
    llm = OpenAiChatLlm(
        standin.base_url, KEY, standin.model, request_timeout_s=5.0, call_timeout_s=1.0
    )
    standin.inject(Fault(hold_after=2))
    started = asyncio.get_running_loop().time()
    try:
        with pytest.raises(BackendTimeoutError, match="no answer within 1 s"):
            await read(llm)
    finally:
        await llm.close()
    assert 1.0 <= asyncio.get_running_loop().time() - started < 2.0
