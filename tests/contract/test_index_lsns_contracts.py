"""Every IndexLsns honours one contract: none for the in-memory doubles and the embedded
indexes (they show writes at once and give no LSN), and the Pinecone dense and sparse indexes'
through the real SDK against the stand-ins."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from retrieval.adapters.embedded_index.bm25_keyword_index import Bm25KeywordIndex
from retrieval.adapters.embedded_index.vector_index import EmbeddedVectorIndex
from retrieval.adapters.pinecone.freshness import DENSE, SPARSE, PineconeIndexLsns, PineconeLsns
from retrieval.adapters.pinecone.sparse_keyword_index import PineconeSparseKeywordIndex
from retrieval.adapters.pinecone.vector_index import PineconeVectorIndex
from retrieval.service.caching.freshness import NoIndexLsns
from retrieval_testkit import InMemoryKeywordIndex, InMemoryVectorIndex
from retrieval_testkit.contracts import IndexLsnsContract
from retrieval_testkit.contracts.index_lsns import DIMENSION, Indexed
from retrieval_testkit.pinecone_standin import PineconeStandIn


class TestInMemoryIndexesGiveNoLsns(IndexLsnsContract):
    @pytest.fixture
    def indexed(self) -> Indexed:
        return Indexed(NoIndexLsns(), InMemoryVectorIndex(), InMemoryKeywordIndex(), frozenset())


class TestEmbeddedIndexesGiveNoLsns(IndexLsnsContract):
    @pytest.fixture
    async def indexed(self, tmp_path: Path) -> AsyncIterator[Indexed]:
        vectors = EmbeddedVectorIndex(tmp_path / "index")
        keywords = Bm25KeywordIndex(tmp_path / "keywords")
        yield Indexed(NoIndexLsns(), vectors, keywords, frozenset())
        await vectors.close()
        await keywords.close()


class TestPineconeIndexLsns(IndexLsnsContract):
    @pytest.fixture
    async def indexed(self) -> AsyncIterator[Indexed]:
        with (
            PineconeStandIn(dimension=DIMENSION) as dense,
            PineconeStandIn(vector_type="sparse") as sparse,
        ):
            dense_lsns, sparse_lsns = PineconeLsns(DENSE), PineconeLsns(SPARSE)
            vectors = PineconeVectorIndex(dense.connection(), dense_lsns)
            keywords = PineconeSparseKeywordIndex(sparse.connection(), sparse_lsns)
            yield Indexed(
                PineconeIndexLsns(dense_lsns, sparse_lsns),
                vectors,
                keywords,
                frozenset({DENSE, SPARSE}),
            )
            await vectors.close()
            await keywords.close()
