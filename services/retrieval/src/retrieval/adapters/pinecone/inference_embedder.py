"""The Embedder port on Pinecone Inference (default ``multilingual-e5-large``, 1024 dimensions).

E5 is asymmetric: queries go with ``input_type="query"``, passages with ``"passage"``,
from which Pinecone adds the E5 prefixes itself. The model's window is 507 tokens. Calls are
made as ``inference`` describes, so ``embed_passages`` of n texts takes at most
ceil(ceil(n / batch_size) / concurrency) of the bounds of one SDK call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field

import numpy as np

from retrieval.adapters.pinecone.clients import PineconeConnection
from retrieval.adapters.pinecone.inference import MAX_EMBED_BATCH, InferenceEmbeddings
from retrieval.errors import BackendError
from retrieval.ports.embedder import Matrix, Vector


@dataclass(eq=False)
class PineconeInferenceEmbedder:
    connection: PineconeConnection
    _: KW_ONLY
    model: str = "multilingual-e5-large"
    dimension: int = 1024
    batch_size: int = MAX_EMBED_BATCH
    concurrency: int = 4
    _inference: InferenceEmbeddings = field(init=False)

    def __post_init__(self) -> None:
        self._inference = InferenceEmbeddings(
            self.connection,
            model=self.model,
            batch_size=self.batch_size,
            concurrency=self.concurrency,
        )

    async def close(self) -> None:
        """Release the connections of the running loop's client."""
        await self._inference.close()

    async def embed_query(self, text: str) -> Vector:
        return (await self._embed([text], "query"))[0]

    async def embed_passages(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        batches = await self._inference.in_batches(
            texts, lambda batch: self._embed(batch, "passage")
        )
        return np.concatenate(batches)

    async def _embed(self, texts: Sequence[str], input_type: str) -> Matrix:
        embeddings = await self._inference.embed(texts, input_type)
        vectors = np.asarray([item.values for item in embeddings], dtype=np.float32)
        if vectors.shape != (len(texts), self.dimension):
            raise BackendError(
                f"Pinecone Inference {self.model} returned vectors of shape {vectors.shape} "
                f"for {len(texts)} texts of dimension {self.dimension}"
            )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        if np.any(norms == 0):
            raise BackendError(f"Pinecone Inference {self.model} returned an all-zero vector")
        return (vectors / norms).astype(np.float32)
