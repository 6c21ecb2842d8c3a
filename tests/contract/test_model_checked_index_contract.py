"""Recording the embedding model keeps every index's contract."""

import pytest

from retrieval.adapters.exact_vector_index import ExactVectorIndex
from retrieval.adapters.model_checked_index import ModelCheckedIndex
from retrieval_testkit import InMemoryVectorIndex
from retrieval_testkit.contracts import VectorIndexContract


class TestModelCheckedExactVectorIndex(VectorIndexContract):
    @pytest.fixture
    def index(self) -> ModelCheckedIndex:
        return ModelCheckedIndex(ExactVectorIndex(), model="contract-model", dimension=4)


class TestModelCheckedInMemoryVectorIndex(VectorIndexContract):
    @pytest.fixture
    def index(self) -> ModelCheckedIndex:
        return ModelCheckedIndex(InMemoryVectorIndex(), model="contract-model", dimension=4)
