"""The word-overlap fake and the Pinecone adapter, through the real SDK over HTTP, honour the
Reranker contract."""

from collections.abc import AsyncIterator, Iterator

import pytest

from retrieval.adapters.pinecone.clients import PineconeConnection
from retrieval.adapters.pinecone.reranker import PineconeReranker
from retrieval_testkit import WordOverlapReranker
from retrieval_testkit.contracts import RerankerContract
from retrieval_testkit.pinecone_standin import PineconeStandIn


class TestWordOverlapReranker(RerankerContract):
    @pytest.fixture
    def reranker(self) -> WordOverlapReranker:
        return WordOverlapReranker()


@pytest.fixture
def standin() -> Iterator[PineconeStandIn]:
    with PineconeStandIn(dimension=4) as running:
        yield running


@pytest.mark.parametrize("model", ["bge-reranker-v2-m3", "cohere-rerank-3.5"])
class TestPineconeReranker(RerankerContract):
    @pytest.fixture
    async def reranker(
        self, standin: PineconeStandIn, model: str
    ) -> AsyncIterator[PineconeReranker]:
        connection = PineconeConnection(
            api_key=standin.api_key,
            control_host=standin.url,
            request_timeout=2.0,
            call_timeout=10.0,
        )
        reranker = PineconeReranker(connection, model=model)
        yield reranker
        await reranker.close()
