import pytest

from retrieval.service.priority_embedder import PriorityEmbedder
from retrieval_testkit import HashEmbedder
from retrieval_testkit.contracts import EmbedderContract


class TestPriorityEmbedder(EmbedderContract):
    @pytest.fixture
    def embedder(self) -> PriorityEmbedder:
        return PriorityEmbedder(
            HashEmbedder(), batch_size=2, passage_calls=1, query_slots=2, query_burst=4
        )
