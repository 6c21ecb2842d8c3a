"""The Pinecone adapters honour the port contracts, through the real SDK over HTTP."""

import uuid
from collections.abc import AsyncIterator, Iterator

import pytest

from retrieval.adapters.model_checked_index import ModelCheckedIndex
from retrieval.adapters.pinecone.freshness import PineconeLsns
from retrieval.adapters.pinecone.inference_embedder import PineconeInferenceEmbedder
from retrieval.adapters.pinecone.vector_index import PineconeVectorIndex
from retrieval_testkit.contracts import EmbedderContract, VectorIndexContract
from retrieval_testkit.needledb_server import NeedleDb, needledb_server
from retrieval_testkit.pinecone_standin import PineconeStandIn


@pytest.fixture
def standin() -> Iterator[PineconeStandIn]:
    with PineconeStandIn(dimension=4) as running:
        yield running


class TestPineconeVectorIndex(VectorIndexContract):
    @pytest.fixture
    async def index(self, standin: PineconeStandIn) -> AsyncIterator[PineconeVectorIndex]:
        index = PineconeVectorIndex(standin.connection(), PineconeLsns())
        yield index
        await index.close()


class TestModelCheckedPineconeVectorIndex(VectorIndexContract):
    @pytest.fixture
    async def index(self, standin: PineconeStandIn) -> AsyncIterator[ModelCheckedIndex]:
        index = PineconeVectorIndex(standin.connection(), PineconeLsns())
        yield ModelCheckedIndex(index, model="contract-model", dimension=4)
        await index.close()


class TestPineconeInferenceEmbedder(EmbedderContract):
    @pytest.fixture
    async def embedder(self, standin: PineconeStandIn) -> AsyncIterator[PineconeInferenceEmbedder]:
        embedder = PineconeInferenceEmbedder(standin.connection(), batch_size=2)
        yield embedder
        await embedder.close()


@pytest.fixture(scope="module")
def needledb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NeedleDb]:
    with needledb_server(tmp_path_factory.mktemp("needledb")) as server:
        yield server


class TestPineconeVectorIndexOnNeedleDb(VectorIndexContract):
    """The same adapter against an independent emulator of Pinecone's data plane."""

    @pytest.fixture
    async def index(self, needledb: NeedleDb) -> AsyncIterator[PineconeVectorIndex]:
        host = needledb.create_index(f"contract-{uuid.uuid4().hex[:8]}", dimension=4)
        index = PineconeVectorIndex(needledb.connection(host), PineconeLsns())
        yield index
        await index.close()
