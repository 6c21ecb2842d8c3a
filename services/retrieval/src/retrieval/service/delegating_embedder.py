"""The base of the Embedders that stand in front of another one."""

from __future__ import annotations

from collections.abc import Sequence

from retrieval.ports.embedder import Embedder, Matrix, Vector


class DelegatingEmbedder:
    """Has the wrapped embedder's model and dimension, and passes to it every call a subclass
    does not override."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder

    @property
    def model(self) -> str:
        return self._embedder.model

    @property
    def dimension(self) -> int:
        return self._embedder.dimension

    async def embed_query(self, text: str) -> Vector:
        return await self._embedder.embed_query(text)

    async def embed_passages(self, texts: Sequence[str]) -> Matrix:
        return await self._embedder.embed_passages(texts)
