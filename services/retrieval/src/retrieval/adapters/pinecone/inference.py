"""Pinecone Inference ``embed`` calls of one model, as the dense embedder and the sparse
keyword index make them.

Inputs longer than the model's window are cut at the end (``truncate="END"``) rather than
refused. Texts go in batches of at most ``MAX_EMBED_BATCH`` (the API's limit),
``concurrency`` batches at a time; each batch is one SDK call, bounded as ``pinecone_errors``
describes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, TypeVar

from pinecone import AsyncPinecone

from retrieval.adapters.per_loop import PerLoop
from retrieval.adapters.pinecone.clients import PineconeConnection
from retrieval.adapters.pinecone.errors import bounded
from retrieval.batching import gather_bounded, slices

MAX_EMBED_BATCH = 96

Batch = TypeVar("Batch")


@dataclass(eq=False)
class InferenceEmbeddings:
    connection: PineconeConnection
    _: KW_ONLY
    model: str
    batch_size: int
    concurrency: int
    _clients: PerLoop[AsyncPinecone] = field(init=False)

    def __post_init__(self) -> None:
        if not 1 <= self.batch_size <= MAX_EMBED_BATCH:
            raise ValueError(f"the embed batch size must be between 1 and {MAX_EMBED_BATCH}")
        if self.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self._clients = PerLoop(self.connection.open_control, lambda client: client.close())

    async def close(self) -> None:
        """Release the connections of the running loop's client."""
        await self._clients.close()

    async def embed(self, texts: Sequence[str], input_type: str) -> list[Any]:
        """One request: the SDK's embeddings of ``texts``, as the model returned them."""
        client = self._clients.get()
        response = await bounded(
            lambda: client.inference.embed(
                model=self.model,
                inputs=list(texts),
                parameters={"input_type": input_type, "truncate": "END"},
            ),
            what=f"Pinecone Inference {self.model}",
            request_timeout=self.connection.request_timeout,
            call_timeout=self.connection.call_timeout,
        )
        return list(response.data)

    async def in_batches(
        self, texts: Sequence[str], embed: Callable[[Sequence[str]], Awaitable[Batch]]
    ) -> list[Batch]:
        """``embed`` of each batch of ``texts``, in order, ``concurrency`` at a time."""
        return await gather_bounded(
            [lambda batch=batch: embed(batch) for batch in slices(texts, self.batch_size)],
            self.concurrency,
        )
