from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from typing import Protocol

from retrieval.domain.chat import ChatMessage, Completion


class Llm(Protocol):
    """A chat model: messages in, one reply out, whole or as it is written."""

    @property
    def model(self) -> str:
        """Name of the model asked."""
        ...

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> Completion:
        """The model's reply to the conversation. Raises ``BackendNotConfiguredError``
        without settings, ``InvalidRequestError`` for messages the server refuses,
        ``BackendError`` (and its kinds: timeout, rate limit, unavailable) otherwise, after
        bounded retries of what can pass."""
        ...

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> AsyncGenerator[str | Completion, None]:
        """The reply ``complete`` gives, as the model writes it: pieces of its text
        (non-empty, in order), then the ``Completion`` (text, model, finish reason, usage)
        last. Raises what ``complete`` raises, while iterating; what can pass is retried
        only before the first piece, so no piece is ever given twice. Closing the
        generator (``aclose``, or cancelling the task iterating it) ends the model's call."""
        ...
