"""``SyncKnowledgeBase`` from plain synchronous code: the async API's results, its errors,
a stream as an iterator, and the stores stopped on closing. Over ``KnowledgeBase`` on the
test kit's in-memory container with a scripted chat model."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from retrieval.api import KnowledgeBase
from retrieval.domain.answers import AnswerDelta, AnswerDone
from retrieval.errors import InvalidRequestError
from retrieval.lifecycle import running
from retrieval.service.ingestion.outcomes import Outcome
from retrieval.settings import Settings
from retrieval.sync_facade import SyncKnowledgeBase
from retrieval_testkit import ScriptedLlm
from retrieval_testkit.container import in_memory_container

NS = "garden"
ANSWER = "Thatch the young bushes on clear nights [1]."
FILES = {
    "frost.md": "# Frost\n\nThatch young tea bushes with grass on clear frosty nights.",
    "pruning.md": "# Pruning\n\nPrune tea bushes every four years in the cool season.",
}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    notes = tmp_path / "notes"
    notes.mkdir()
    for name, text in FILES.items():
        (notes / name).write_text(text)
    return notes


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[SyncKnowledgeBase]:
    settings = Settings(data_dir=tmp_path / "data")
    container = in_memory_container(settings, llm=ScriptedLlm(lambda request: ANSWER))

    @asynccontextmanager
    async def opened() -> AsyncIterator[KnowledgeBase]:
        async with running(settings, container) as application:
            yield KnowledgeBase(application)

    with SyncKnowledgeBase(opened) as kb:
        yield kb


def test_the_knowledge_base_from_code_without_an_event_loop(
    kb: SyncKnowledgeBase, folder: Path
) -> None:
    report = kb.ingest(folder, namespace=NS, domain="tea_cultivation")
    assert [o.outcome for o in report.outcomes] == [Outcome.CREATED] * 2
    assert not report.failures

    found = kb.retrieve("frosty nights", namespace=NS, top_k=1, mode="keyword")
    assert found.matches[0].source == str(folder / "frost.md")
    answer = kb.ask("What protects bushes from frost?", namespace=NS)
    assert answer.text == ANSWER
    assert answer.citations

    listed = kb.documents(namespace=NS)
    assert {d.source for d in listed} == {str(folder / name) for name in FILES}
    deleted = kb.delete(namespace=NS, source_prefix=str(folder / "pruning.md"))
    assert [d.source for d in deleted.deleted] == [str(folder / "pruning.md")]
    assert [n.namespace for n in kb.stats().namespaces] == [NS]


def test_a_stream_is_an_iterator_of_the_events(kb: SyncKnowledgeBase, folder: Path) -> None:
    kb.ingest(folder, namespace=NS, domain="tea_cultivation")
    events = list(kb.ask_stream("What protects bushes from frost?", namespace=NS))
    *deltas, done = events
    assert all(isinstance(event, AnswerDelta) for event in deltas)
    assert isinstance(done, AnswerDone)
    assert "".join(delta.text for delta in deltas) == done.answer.text == ANSWER


def test_the_async_api_s_errors_reach_the_caller(kb: SyncKnowledgeBase) -> None:
    with pytest.raises(InvalidRequestError, match="top_k"):
        kb.retrieve("frost", top_k=0)
    with pytest.raises(InvalidRequestError):
        kb.ask_stream("frost", top_k=0).__next__()
    assert kb.stats().namespaces == (), "still serving after an error"


def test_closing_stops_the_stores_and_the_loop(tmp_path: Path) -> None:
    stopped = []

    @asynccontextmanager
    async def opened() -> AsyncIterator[KnowledgeBase]:
        settings = Settings(data_dir=tmp_path / "data")
        async with running(settings, in_memory_container(settings)) as application:
            yield KnowledgeBase(application)
        stopped.append(threading.current_thread().name)

    kb = SyncKnowledgeBase(opened)
    kb.close()
    kb.close()
    assert stopped == ["retrieval-sync-facade"]
    assert not any(thread.name == "retrieval-sync-facade" for thread in threading.enumerate())


def test_a_failed_opening_raises_and_leaves_no_loop_running() -> None:
    @asynccontextmanager
    async def opened() -> AsyncIterator[KnowledgeBase]:
        raise InvalidRequestError("no such store", field="store")
        yield

    with pytest.raises(InvalidRequestError, match="no such store"):
        SyncKnowledgeBase(opened)
    assert not any(thread.name == "retrieval-sync-facade" for thread in threading.enumerate())
