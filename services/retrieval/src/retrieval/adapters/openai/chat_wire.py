"""What an OpenAI-compatible chat completions server replies, as read here: a completion
whole, or the chunks of a streamed one. Whatever else a reply carries is ignored; a reply
without what is read here is a ``BackendError`` naming what is wrong."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from retrieval.domain.chat import Completion
from retrieval.errors import BackendError


class _Wire(BaseModel):
    model_config = ConfigDict(strict=True, frozen=True)


Reply = TypeVar("Reply", bound=_Wire)


class _Message(_Wire):
    content: str


class _Choice(_Wire):
    message: _Message
    finish_reason: str | None = None


class _Usage(_Wire):
    prompt_tokens: int | None = Field(default=None, ge=0)
    completion_tokens: int | None = Field(default=None, ge=0)


class ChatCompletionReply(_Wire):
    """The parts of a chat completion read here."""

    model: str | None = None
    choices: list[_Choice] = Field(min_length=1)
    usage: _Usage | None = None


class _Delta(_Wire):
    content: str | None = None


class _ChunkChoice(_Wire):
    delta: _Delta
    finish_reason: str | None = None


class ChatCompletionChunk(_Wire):
    """The parts of a chunk of a streamed chat completion read here: the first choice's new
    text and, once it is done, why it stopped; the usage comes in a chunk of its own, with
    no choice, when asked for (``stream_options.include_usage``)."""

    model: str | None = None
    choices: list[_ChunkChoice] = Field(default_factory=list)
    usage: _Usage | None = None

    @property
    def text(self) -> str:
        return (self.choices[0].delta.content or "") if self.choices else ""

    @property
    def finish_reason(self) -> str | None:
        return self.choices[0].finish_reason if self.choices else None


def parsed_reply(kind: type[Reply], payload: Any, what: str) -> Reply:
    """``payload`` read as ``kind``; ``BackendError`` naming the first problems otherwise."""
    try:
        return kind.model_validate(payload)
    except ValidationError as error:
        raise BackendError(f"{what}: malformed reply: {problems(error)}") from error


def problems(error: ValidationError) -> str:
    """The first three problems Pydantic found in a reply, each after where it is."""
    return "; ".join(
        f"{'.'.join(map(str, problem['loc'])) or 'reply'}: {problem['msg']}"
        for problem in error.errors()[:3]
    )


def completion_from(payload: Any, what: str, model: str) -> Completion:
    """The first choice of a decoded reply; ``model`` when the server names none."""
    reply = parsed_reply(ChatCompletionReply, payload, what)
    usage = reply.usage or _Usage()
    return Completion(
        text=reply.choices[0].message.content,
        model=reply.model or model,
        finish_reason=reply.choices[0].finish_reason,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
    )


def streamed_completion(chunks: Sequence[ChatCompletionChunk], model: str) -> Completion:
    """The completion the chunks of a stream add up to; ``model`` when the server names none."""
    usage = next((chunk.usage for chunk in reversed(chunks) if chunk.usage), None) or _Usage()
    return Completion(
        text="".join(chunk.text for chunk in chunks),
        model=next((chunk.model for chunk in chunks if chunk.model), model),
        finish_reason=next(
            (chunk.finish_reason for chunk in reversed(chunks) if chunk.finish_reason), None
        ),
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
    )
