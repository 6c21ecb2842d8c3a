"""A deterministic embedder for tests: hashed bag of words, no model, no network."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from retrieval.ports.embedder import Matrix, Vector

TOKEN = re.compile(r"\w+")


class HashEmbedder:
    """Texts sharing words get similar vectors; a query differs from the same passage.

    Like E5, the role (query or passage) is part of the input, so the two never coincide.
    """

    def __init__(self, dimension: int = 64, model: str = "hash-bow") -> None:
        self._dimension = dimension
        self._model = model
        self.queries: list[str] = []
        self.passages: list[str] = []

    @property
    def model(self) -> str:
        return self._model

    @property
    def dimension(self) -> int:
        return self._dimension

    async def embed_query(self, text: str) -> Vector:
        self.queries.append(text)
        return self._embed(text, role="query")

    async def embed_passages(self, texts: Sequence[str]) -> Matrix:
        self.passages.extend(texts)
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        return np.stack([self._embed(text, role="passage") for text in texts])

    def _embed(self, text: str, role: str) -> Vector:
        vector = np.zeros(self._dimension, dtype=np.float32)
        for token in [f"role:{role}", *TOKEN.findall(text.lower())]:
            digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
            slot = int.from_bytes(digest[:4], "little") % self._dimension
            vector[slot] += 1.0 if digest[4] & 1 else -1.0
        norm = float(np.linalg.norm(vector))
        if not norm:  # the words cancelled out; a model's vector is never all zero
            vector[0] = 1.0
            return vector
        return vector / norm
