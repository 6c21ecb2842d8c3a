"""Recording the embedding model keeps every index's contract."""

import pytest

from retrieval.adapters.embedded_index.vector_index import EmbeddedVectorIndex
from retrieval.adapters.model_checked_index import ModelCheckedIndex
from retrieval_testkit import InMemoryVectorIndex
from retrieval_testkit.contracts import VectorIndexContract


class TestModelCheckedEmbeddedVectorIndex(VectorIndexContract):
    @pytest.fixture
    def index(self) -> ModelCheckedIndex:
        return ModelCheckedIndex(EmbeddedVectorIndex(), model="contract-model", dimension=4)


class TestModelCheckedInMemoryVectorIndex(VectorIndexContract):
    @pytest.fixture
    def index(self) -> ModelCheckedIndex:
        return ModelCheckedIndex(InMemoryVectorIndex(), model="contract-model", dimension=4)
