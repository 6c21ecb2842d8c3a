"""The sparse keyword adapter honours the KeywordIndex contract, through the real SDK over HTTP."""

from collections.abc import AsyncIterator, Iterator

import pytest

from retrieval.adapters.pinecone.clients import PineconeConnection
from retrieval.adapters.pinecone.freshness import SPARSE, PineconeLsns
from retrieval.adapters.pinecone.sparse_keyword_index import PineconeSparseKeywordIndex
from retrieval_testkit.contracts import KeywordIndexContract
from retrieval_testkit.pinecone_standin import PineconeStandIn


@pytest.fixture
def standin() -> Iterator[PineconeStandIn]:
    with PineconeStandIn(vector_type="sparse") as running:
        yield running


class TestPineconeSparseKeywordIndex(KeywordIndexContract):
    @pytest.fixture
    async def index(self, standin: PineconeStandIn) -> AsyncIterator[PineconeSparseKeywordIndex]:
        connection = PineconeConnection(
            api_key=standin.api_key,
            index_host=standin.url,
            control_host=standin.url,
            request_timeout=2.0,
            call_timeout=10.0,
        )
        index = PineconeSparseKeywordIndex(connection, PineconeLsns(SPARSE), embed_batch_size=2)
        yield index
        await index.close()
