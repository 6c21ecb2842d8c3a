from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from retrieval.adapters.exact_vector_index import ExactVectorIndex
from retrieval_testkit.contracts import VectorIndexContract


class TestExactVectorIndexInMemory(VectorIndexContract):
    @pytest.fixture
    def index(self) -> ExactVectorIndex:
        return ExactVectorIndex()


class TestExactVectorIndexOnDisk(VectorIndexContract):
    @pytest.fixture
    async def index(self, tmp_path: Path) -> AsyncIterator[ExactVectorIndex]:
        index = ExactVectorIndex(tmp_path / "index")
        yield index
        await index.close()
