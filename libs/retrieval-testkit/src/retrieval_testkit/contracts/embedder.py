"""What every Embedder must do. Subclass and provide an ``embedder`` fixture."""

from __future__ import annotations

import numpy as np
import pytest

from retrieval.ports.embedder import Embedder

PASSAGES = [
    "Blister blight is a fungal disease of tea leaves spread in wet, cloudy weather.",
    "Frost damages tea bushes in high-altitude gardens during clear winter nights.",
    "Orthodox black tea is graded by leaf size: whole leaf, broken, fannings and dust.",
]


class EmbedderContract:
    async def test_query_vector_has_the_declared_dimension(self, embedder: Embedder) -> None:
        vector = await embedder.embed_query("what causes blister blight")
        assert vector.shape == (embedder.dimension,)
        assert vector.dtype == np.float32

    async def test_passages_keep_order_and_shape(self, embedder: Embedder) -> None:
        together = await embedder.embed_passages(PASSAGES)
        assert together.shape == (len(PASSAGES), embedder.dimension)
        alone = await embedder.embed_passages(PASSAGES[1:2])
        assert np.dot(together[1], alone[0]) == pytest.approx(1.0, abs=1e-3)

    async def test_no_passages_give_an_empty_matrix(self, embedder: Embedder) -> None:
        assert (await embedder.embed_passages([])).shape == (0, embedder.dimension)

    async def test_vectors_are_unit_length(self, embedder: Embedder) -> None:
        vectors = [
            await embedder.embed_query("grey blight"),
            *await embedder.embed_passages(PASSAGES),
        ]
        assert [float(np.linalg.norm(v)) for v in vectors] == pytest.approx([1.0] * 4, abs=1e-3)

    async def test_a_query_is_not_embedded_as_a_passage(self, embedder: Embedder) -> None:
        query = await embedder.embed_query(PASSAGES[0])
        passage = (await embedder.embed_passages(PASSAGES[:1]))[0]
        assert float(np.dot(query, passage)) < 0.9999

    async def test_a_related_passage_scores_higher(self, embedder: Embedder) -> None:
        query = await embedder.embed_query("fungal disease of tea leaves in wet weather")
        scores = (await embedder.embed_passages(PASSAGES)) @ query
        assert int(np.argmax(scores)) == 0

    def test_model_is_named(self, embedder: Embedder) -> None:
        assert embedder.model
