"""One scenario through both doors to the knowledge base, ``retrieval.connect()``'s
``KnowledgeBase`` in process and ``RetrievalClient`` against a gRPC server started here as
``retrieval serve`` starts it: a folder ingested, retrieved from, asked about (a scripted
chat model answers), listed, deleted from, counted. The same calls give the same results.
Then the blocking facade over the client, from code without an event loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from retrieval.api import KnowledgeBase
from retrieval.client_api import KnowledgeBaseApi
from retrieval.domain.answers import AnswerDelta, AnswerDone
from retrieval.errors import InvalidRequestError
from retrieval.grpc import GrpcSettings, RetrievalClient, create_server
from retrieval.lifecycle import Application, running
from retrieval.service.ingestion.outcomes import Outcome
from retrieval.settings import Settings
from retrieval_testkit import ScriptedLlm
from retrieval_testkit.container import in_memory_container

NS = "garden"
DOMAIN = "tea_cultivation"
ANSWER = "Thatch the young bushes on clear nights [1]."
FILES = {
    "frost.md": "# Frost\n\nThatch young tea bushes with grass on clear frosty nights.",
    "pruning.md": "# Pruning\n\nPrune tea bushes every four years in the cool season.",
    "sub/withering.md": "# Withering\n\nFresh leaf is withered for fourteen to eighteen hours.",
}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    notes = tmp_path / "notes"
    for name, text in FILES.items():
        (notes / name).parent.mkdir(parents=True, exist_ok=True)
        (notes / name).write_text(text)
    return notes


@pytest.fixture
async def application(tmp_path: Path) -> AsyncIterator[Application]:
    settings = Settings(data_dir=tmp_path / "data")
    container = in_memory_container(settings, llm=ScriptedLlm(lambda request: ANSWER))
    async with running(settings, container) as app:
        yield app


@pytest.fixture(params=["in process", "over gRPC"])
async def kb(request: pytest.FixtureRequest, application: Application) -> AsyncIterator[object]:
    if request.param == "in process":
        yield KnowledgeBase(application)
        return
    server, port = await create_server(application, "127.0.0.1:0", GrpcSettings())
    async with RetrievalClient.connect(f"127.0.0.1:{port}", timeout=10) as client:
        yield client
    await server.stop(None)


async def test_one_scenario_through_either_door(kb: KnowledgeBaseApi, folder: Path) -> None:
    report = await kb.ingest(folder, namespace=NS, domain=DOMAIN)
    assert (report.namespace, report.files, report.failures) == (NS, 3, ())
    assert [o.outcome for o in report.outcomes] == [Outcome.CREATED] * 3
    again = await kb.ingest([folder / "frost.md"], namespace=NS, domain=DOMAIN)
    assert [o.outcome for o in again.outcomes] == [Outcome.UNCHANGED]

    found = await kb.retrieve("frosty nights thatch", namespace=NS, top_k=2, mode="keyword")
    assert found.matches[0].source == str(folder / "frost.md")
    assert set(found.matches[0].scores) == {"keyword"}, "the option reached the search"
    under = await kb.retrieve("leaf", namespace=NS, source_prefix=str(folder / "sub"))
    assert {m.source for m in under.matches} == {str(folder / "sub" / "withering.md")}

    answer = await kb.ask("What protects young bushes from frost?", namespace=NS, top_k=2)
    assert answer.text == ANSWER
    assert answer.citations[0].source == str(folder / "frost.md")
    events = [event async for event in kb.ask_stream("And from frost?", namespace=NS, top_k=2)]
    assert all(isinstance(event, AnswerDelta) for event in events[:-1])
    assert isinstance(events[-1], AnswerDone)
    assert events[-1].answer.text == ANSWER

    listed = await kb.documents(namespace=NS)
    assert {d.source for d in listed} == {str(folder / name) for name in FILES}
    deleted = await kb.delete(namespace=NS, source_prefix=str(folder / "sub"))
    assert [d.source for d in deleted.deleted] == [str(folder / "sub" / "withering.md")]
    kept = await kb.documents(namespace=NS, source_prefix=str(folder))
    assert len(kept) == 2
    (counted,) = (await kb.stats()).namespaces
    chunks = sum(d.chunks for d in kept)
    assert (counted.namespace, counted.chunk_count, counted.vector_count) == (NS, chunks, chunks)


async def test_a_sync_follows_the_folder_through_either_door(
    kb: KnowledgeBaseApi, folder: Path
) -> None:
    await kb.sync(folder, namespace=NS, domain=DOMAIN)
    (folder / "pruning.md").unlink()
    synced = await kb.sync([folder], namespace=NS, domain=DOMAIN)
    gone = [o.source for o in synced.report.outcomes if o.outcome is Outcome.DELETED]
    assert gone == [str(folder / "pruning.md")]
    assert len(await kb.documents(namespace=NS)) == 2


async def test_either_door_refuses_a_request_the_same_way(kb: KnowledgeBaseApi) -> None:
    with pytest.raises(InvalidRequestError) as refused:
        await kb.retrieve("frost", namespace=NS, top_k=0)
    assert refused.value.field == "top_k"
    with pytest.raises(InvalidRequestError) as unknown:
        await kb.retrieve("frost", namespace=NS, no_such_option=True)
    assert "no_such_option" in str(unknown.value)


@pytest.fixture
def served_elsewhere(tmp_path: Path) -> Iterator[str]:
    """The address of a server on a loop of its own in another thread, for synchronous tests."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    settings = Settings(data_dir=tmp_path / "data")
    container = in_memory_container(settings, llm=ScriptedLlm(lambda request: ANSWER))
    stop = asyncio.Event()
    address: asyncio.Future[str] = asyncio.Future(loop=loop)

    async def serve() -> None:
        async with running(settings, container) as app:
            server, port = await create_server(app, "127.0.0.1:0", GrpcSettings())
            address.set_result(f"127.0.0.1:{port}")
            await stop.wait()
            await server.stop(None)

    served = asyncio.run_coroutine_threadsafe(serve(), loop)
    yield asyncio.run_coroutine_threadsafe(asyncio.wait_for(address, 30), loop).result()
    loop.call_soon_threadsafe(stop.set)
    served.result(timeout=30)
    loop.call_soon_threadsafe(loop.stop)
    thread.join()
    loop.close()


def test_the_client_from_code_without_an_event_loop(served_elsewhere: str, folder: Path) -> None:
    with RetrievalClient.connect_sync(served_elsewhere, timeout=10) as kb:
        report = kb.ingest(folder, namespace=NS, domain=DOMAIN)
        assert len(report.outcomes) == 3
        found = kb.retrieve("frosty nights thatch", namespace=NS, top_k=1)
        assert found.matches[0].source == str(folder / "frost.md")
        assert kb.ask("What about frost?", namespace=NS).text == ANSWER
        *_, done = kb.ask_stream("What about frost?", namespace=NS)
        assert isinstance(done, AnswerDone)
        assert done.answer.text == ANSWER
