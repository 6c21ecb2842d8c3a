"""The Embedder port on Pinecone Inference (default ``multilingual-e5-large``, 1024 dimensions).

E5 is asymmetric: queries go with ``input_type="query"``, passages with ``"passage"``,
from which Pinecone adds the E5 prefixes itself. Inputs longer than the model's window (507
tokens) are cut at the end (``truncate="END"``) rather than refused. Passages are sent in
batches of at most 96 (the API's limit), ``concurrency`` batches at a time; each batch is
one SDK call, bounded as ``pinecone_errors`` describes, so ``embed_passages`` of n texts
takes at most ceil(ceil(n / batch_size) / concurrency) of those bounds.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from retrieval.adapters.pinecone.clients import PerLoop, PineconeConnection
from retrieval.adapters.pinecone.errors import bounded
from retrieval.batching import gather_bounded, slices
from retrieval.errors import BackendError
from retrieval.ports.embedder import Matrix, Vector

MAX_BATCH = 96


class PineconeInferenceEmbedder:
    def __init__(
        self,
        connection: PineconeConnection,
        *,
        model: str = "multilingual-e5-large",
        dimension: int = 1024,
        batch_size: int = MAX_BATCH,
        concurrency: int = 4,
    ) -> None:
        if not 1 <= batch_size <= MAX_BATCH:
            raise ValueError(f"batch_size must be between 1 and {MAX_BATCH}")
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self._connection = connection
        self._model = model
        self._dimension = dimension
        self._batch_size = batch_size
        self._concurrency = concurrency
        self._clients = PerLoop(connection.open_control, lambda client: client.close())

    @property
    def model(self) -> str:
        return self._model

    @property
    def dimension(self) -> int:
        return self._dimension

    async def close(self) -> None:
        """Release the connections of the running loop's client."""
        await self._clients.close()

    async def embed_query(self, text: str) -> Vector:
        return (await self._embed([text], "query"))[0]

    async def embed_passages(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        batches = await gather_bounded(
            [
                lambda batch=batch: self._embed(batch, "passage")
                for batch in slices(texts, self._batch_size)
            ],
            self._concurrency,
        )
        return np.concatenate(batches)

    async def _embed(self, texts: Sequence[str], input_type: str) -> Matrix:
        client = self._clients.get()
        response = await bounded(
            lambda: client.inference.embed(
                model=self._model,
                inputs=list(texts),
                parameters={"input_type": input_type, "truncate": "END"},
            ),
            what=f"Pinecone Inference {self._model}",
            request_timeout=self._connection.request_timeout,
            call_timeout=self._connection.call_timeout,
        )
        vectors = np.asarray([item.values for item in response.data], dtype=np.float32)
        if vectors.shape != (len(texts), self._dimension):
            raise BackendError(
                f"Pinecone Inference {self._model} returned vectors of shape {vectors.shape} "
                f"for {len(texts)} texts of dimension {self._dimension}"
            )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        if np.any(norms == 0):
            raise BackendError(f"Pinecone Inference {self._model} returned an all-zero vector")
        return (vectors / norms).astype(np.float32)
