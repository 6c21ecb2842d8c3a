from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from retrieval.domain.chat import ChatMessage, Completion


class Llm(Protocol):
    """A chat model: messages in, one reply out."""

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
