from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]
Matrix = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns text into L2-normalised dense vectors with an asymmetric (E5) model.

    A query and a passage with the same text embed differently: search with
    ``embed_query`` and index with ``embed_passages``, never the other way round.
    """

    @property
    def model(self) -> str:
        """Name of the embedding model; vectors of different models never mix."""
        ...

    @property
    def dimension(self) -> int:
        """Length of every vector this embedder returns."""
        ...

    async def embed_query(self, text: str) -> Vector:
        """One search query, shape ``(dimension,)``."""
        ...

    async def embed_passages(self, texts: Sequence[str]) -> Matrix:
        """Documents to index, shape ``(len(texts), dimension)``, in input order.

        Implementations batch as their backend requires; an empty input gives ``(0, dimension)``.
        """
        ...
