"""What the language-model port takes and returns."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from retrieval.domain.models import Frozen


class ChatMessage(Frozen):
    role: Literal["system", "user", "assistant"] = Field(description="Who speaks.")
    content: str = Field(description="What is said.")


class Completion(Frozen):
    """A model's reply."""

    text: str = Field(description="The reply's text.")
    model: str = Field(description="The model that answered, as the server names it.")
    finish_reason: str | None = Field(
        default=None, description="Why the model stopped: stop, length, ..."
    )
    prompt_tokens: int | None = Field(default=None, ge=0, description="As the server counts.")
    completion_tokens: int | None = Field(default=None, ge=0, description="As the server counts.")


def first_line(reply: str) -> str:
    """The reply's first non-blank line, without surrounding quotes."""
    line = next((line.strip() for line in reply.splitlines() if line.strip()), "")
    return line.strip("\"'`“”").strip()
