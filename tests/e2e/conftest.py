"""The real model and stores for the framework retrievers' tests, started on an event loop of
a thread of their own, as a program that calls a retriever from synchronous code keeps one;
the small corpus of sample files they hold; and a gRPC server and client over them."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import AsyncIterator, Coroutine, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest

from retrieval.api import KnowledgeBase
from retrieval.grpc import GrpcSettings, RetrievalClient, create_server
from retrieval.lifecycle import Application, running
from retrieval.settings import Settings
from retrieval_testkit.sample_files import FRONT_MATTER, PAGE, pdf_document

T = TypeVar("T")
CORPUS_NAMESPACE = "tea-handbook"
PRUNING = """# Pruning

## Timing

Prune tea bushes every four years in the cool season, before the first flush.

## Tools

Sharp knives leave clean cuts that heal before the rains.
"""
FROST = pdf_document(
    [
        [(18, "Frost protection"), (12, "Ground frost scorches the plucking table.")],
        [(12, "Thatch young tea bushes with grass on clear still nights.")],
    ],
    title="Frost protection",
)


def write_corpus(folder: Path) -> Path:
    """Markdown with front matter and with sections, a web page and a two-page PDF."""
    folder.mkdir(parents=True)
    (folder / "grey-blight.md").write_text(FRONT_MATTER)
    (folder / "pruning.md").write_text(PRUNING)
    (folder / "red-rust.html").write_bytes(PAGE)
    (folder / "frost.pdf").write_bytes(FROST)
    return folder


@asynccontextmanager
async def corpus_application(settings: Settings, corpus: Path) -> AsyncIterator[Application]:
    """The stores ``settings`` configure, started, the corpus ingested into CORPUS_NAMESPACE
    (its documents that set no domain in ``tea_cultivation``)."""
    async with running(settings) as app:
        report = await KnowledgeBase(app).ingest(
            [corpus], namespace=CORPUS_NAMESPACE, domain="tea_cultivation"
        )
        assert not report.failures
        yield app


@asynccontextmanager
async def served(app: Application) -> AsyncIterator[RetrievalClient]:
    """A loopback gRPC server over ``app`` and a client of it."""
    server, port = await create_server(app, "127.0.0.1:0", GrpcSettings())
    try:
        async with RetrievalClient.connect(f"127.0.0.1:{port}", timeout=30) as client:
            yield client
    finally:
        await server.stop(None)


def store_settings(tmp_path: Path, mongo_uri: str) -> Settings:
    """The embedded stack in ``tmp_path`` on a MongoDB database of its own."""
    return Settings(
        data_dir=tmp_path,
        mongodb_uri=mongo_uri,
        mongodb_database=f"test_{uuid.uuid4().hex[:12]}",
    )


@pytest.fixture
def corpus_namespace() -> str:
    return CORPUS_NAMESPACE


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_corpus(tmp_path_factory.mktemp("corpus") / "handbook")


@pytest.fixture(scope="module")
def knowledge_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """An event loop running in a thread of its own until the module's tests are done."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join()
    loop.close()


def entered_on(loop: asyncio.AbstractEventLoop, opened: Any) -> Iterator[Any]:
    """What the async context manager ``opened`` gives, entered and left on ``loop``."""

    def on_loop(call: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(call, loop).result()

    value = on_loop(opened.__aenter__())
    yield value
    on_loop(opened.__aexit__(None, None, None))


@pytest.fixture(scope="module")
def loop_application(
    knowledge_loop: asyncio.AbstractEventLoop,
    corpus: Path,
    mongo_uri: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Application]:
    """The real embedded stack holding the corpus, started on ``knowledge_loop``."""
    settings = store_settings(tmp_path_factory.mktemp("data"), mongo_uri)
    yield from entered_on(knowledge_loop, corpus_application(settings, corpus))


@pytest.fixture(scope="module")
def loop_knowledge_base(loop_application: Application) -> KnowledgeBase:
    """The in-process knowledge base over ``loop_application``."""
    return KnowledgeBase(loop_application)


@pytest.fixture
async def served_client(
    tmp_path: Path, corpus: Path, mongo_uri: str
) -> AsyncIterator[RetrievalClient]:
    """A client of a gRPC server over the real embedded stack holding the corpus, all on the
    test's own event loop."""
    settings = store_settings(tmp_path, mongo_uri)
    async with corpus_application(settings, corpus) as app, served(app) as client:
        yield client


@pytest.fixture(scope="module")
def loop_client(
    knowledge_loop: asyncio.AbstractEventLoop, loop_application: Application
) -> Iterator[RetrievalClient]:
    """A client of a gRPC server over ``loop_application``, both on ``knowledge_loop``."""
    yield from entered_on(knowledge_loop, served(loop_application))
