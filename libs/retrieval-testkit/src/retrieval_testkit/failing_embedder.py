"""An embedder that fails on demand: what a model or an embedding API looks like when down."""

from __future__ import annotations

from collections.abc import Sequence

from retrieval.ports.embedder import Matrix, Vector
from retrieval_testkit.hash_embedder import HashEmbedder


class FailingEmbedder(HashEmbedder):
    """A ``HashEmbedder`` that raises ``error`` on every call while it is set."""

    def __init__(self, dimension: int = 64) -> None:
        super().__init__(dimension)
        self.error: Exception | None = None

    async def embed_query(self, text: str) -> Vector:
        self._fail()
        return await super().embed_query(text)

    async def embed_passages(self, texts: Sequence[str]) -> Matrix:
        self._fail()
        return await super().embed_passages(texts)

    def _fail(self) -> None:
        if self.error is not None:
            raise self.error
