"""``retrieval.connect()`` on the real model, indexes and MongoDB: files in, typed results out,
as the command line does it."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from retrieval import AnswerDelta, AnswerDone
from retrieval.api import KnowledgeBase, connect
from retrieval.domain.models import RagDocument
from retrieval.errors import ConfigurationError, InvalidRequestError, NamespaceNotFoundError
from retrieval.service.ingestion.outcomes import Outcome
from retrieval_testkit import ChatRequest, OpenAiStandIn
from retrieval_testkit.openai_standin import Fault

NS = "handbook"
KEYS = """---
title: Rotating API keys
---
# Rotating API keys

Create a new API key in the console, deploy it to every service, then revoke the old key.
"""
BACKUPS = """# Backups

The database is backed up every night at two; a restore takes about twenty minutes.
"""
FROST = RagDocument(
    document_id="frost",
    title="Frost",
    domain="weather_patterns",
    content="Ground frost on clear winter nights scorches the plucking table of tea bushes.",
)


@pytest.fixture
def docs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder of two guides and an unsupported file, under the working directory."""
    folder = tmp_path / "docs"
    (folder / "ops").mkdir(parents=True)
    (folder / "keys.md").write_text(KEYS)
    (folder / "ops" / "backups.md").write_text(BACKUPS)
    (folder / "logo.png").write_bytes(b"\x89PNG")
    monkeypatch.chdir(tmp_path)
    return Path("docs")


@pytest.fixture
def stores(tmp_path: Path, mongo_uri: str) -> dict[str, object]:
    """Settings of stores of this test's own: a data directory and a MongoDB database."""
    return {
        "data_dir": tmp_path / "data",
        "mongodb_uri": mongo_uri,
        "mongodb_database": f"test_{uuid.uuid4().hex[:12]}",
    }


@pytest.fixture
async def kb(stores: dict[str, object]) -> AsyncIterator[KnowledgeBase]:
    async with connect(**stores) as kb:
        yield kb


async def test_files_of_a_new_domain_are_ingested_and_found_with_their_scores(
    kb: KnowledgeBase, docs: Path
) -> None:
    report = await kb.ingest([docs, FROST], namespace=NS, domain="software_docs")

    assert [(o.document_id, o.outcome) for o in report.outcomes] == [
        ("keys", Outcome.CREATED),
        ("ops--backups", Outcome.CREATED),
        ("frost", Outcome.CREATED),
    ]
    assert (report.namespace, report.files, report.failures) == (NS, 2, ())
    assert report.skipped == (str(docs / "logo.png"),)
    result = await kb.retrieve("how do I rotate an API key?", namespace=NS, top_k=2)
    top = result.matches[0]
    assert (top.document_id, top.domain, top.title) == (
        "keys",
        "software_docs",
        "Rotating API keys",
    )
    assert {"dense", "keyword", "fused"} <= top.scores.keys()
    assert 0 < top.scores["dense"] <= 1
    only_docs = await kb.retrieve("frost", namespace=NS, domains=["software_docs"], top_k=5)
    assert {m.domain for m in only_docs.matches} == {"software_docs"}
    again = await kb.ingest(docs / "keys.md", namespace=NS, domain="software_docs")
    assert [o.outcome for o in again.outcomes] == [Outcome.UNCHANGED]


async def test_options_are_the_retrieval_options_by_name(kb: KnowledgeBase, docs: Path) -> None:
    await kb.ingest([docs], namespace=NS, domain="software_docs")

    keyword = await kb.retrieve("database restore", namespace=NS, mode="keyword")

    assert keyword.matches[0].document_id == "ops--backups"
    assert "dense" not in keyword.matches[0].scores
    with pytest.raises(InvalidRequestError) as raised:
        await kb.retrieve("database restore", namespace=NS, mmr_lamda=0.5)
    assert raised.value.field == "mmr_lamda"


async def test_a_file_that_cannot_be_read_and_a_document_refused_fail_alone(
    kb: KnowledgeBase, docs: Path
) -> None:
    (docs / "untitled.md").write_text("# Untitled\n\nNo domain anywhere.\n")
    reserved = FROST.model_copy(update={"document_id": "reserved", "metadata": {"position": "x"}})

    report = await kb.ingest([docs / "keys.md", docs / "untitled.md", reserved], namespace=NS)

    assert [o.document_id for o in report.outcomes] == []
    assert [(f.source, f.field) for f in report.failures] == [
        (str(docs / "keys.md"), "domain"),
        (str(docs / "untitled.md"), "domain"),
        ("reserved", "metadata"),
    ]
    assert "no domain" in report.failures[0].reason
    assert "reserved" in report.failures[2].reason


async def test_sync_follows_the_folder_and_delete_takes_a_relative_source_prefix(
    kb: KnowledgeBase, docs: Path
) -> None:
    await kb.sync(docs, namespace=NS, domain="software_docs")
    (docs / "keys.md").unlink()

    planned = await kb.sync([docs], namespace=NS, domain="software_docs", dry_run=True)
    assert [(o.document_id, o.outcome) for o in planned.report.outcomes] == [
        ("ops--backups", Outcome.UNCHANGED),
        ("keys", Outcome.DELETED),
    ]
    assert [d.document_id for d in await kb.documents(namespace=NS)] == ["keys", "ops--backups"]
    synced = await kb.sync([docs], namespace=NS, domain="software_docs")
    assert synced.report.count(Outcome.DELETED) == 1
    assert synced.failures == ()

    listed = await kb.documents(namespace=NS, source_prefix="docs/ops")
    assert [(d.document_id, d.source) for d in listed] == [
        ("ops--backups", os.path.abspath("docs/ops/backups.md"))
    ]
    deleted = await kb.delete(namespace=NS, source_prefix="docs/ops")
    assert [d.document_id for d in deleted.deleted] == ["ops--backups"]
    with pytest.raises(NamespaceNotFoundError):
        await kb.retrieve("backups", namespace=NS)


async def test_ask_answers_a_plain_question_citing_its_passages(
    stores: dict[str, object], docs: Path
) -> None:
    def cite_the_first(request: ChatRequest) -> str:
        assert "Question: How do I rotate an API key?" in request.messages[-1].content
        return "Deploy a new key, then revoke the old one [1]."

    with OpenAiStandIn(model="docs-model", reply=cite_the_first) as llm:
        async with connect(**stores, llm_base_url=llm.base_url, llm_model="docs-model") as kb:
            await kb.ingest([docs], namespace=NS, domain="software_docs")
            answer = await kb.ask("How do I rotate an API key?", namespace=NS, top_k=1)

    assert answer.answered
    assert answer.text == "Deploy a new key, then revoke the old one [1]."
    [citation] = answer.citations
    assert (citation.number, citation.document_id) == (1, "keys")
    assert citation.source == os.path.abspath("docs/keys.md")


async def test_ask_stream_gives_the_answer_as_the_model_writes_it_and_stops_it_when_left(
    stores: dict[str, object], docs: Path
) -> None:
    question = "How do I rotate an API key?"
    with OpenAiStandIn(
        model="docs-model", reply=lambda request: "Deploy a new key, then revoke the old one [1]."
    ) as llm:
        async with connect(**stores, llm_base_url=llm.base_url, llm_model="docs-model") as kb:
            await kb.ingest([docs], namespace=NS, domain="software_docs")
            events = [event async for event in kb.ask_stream(question, namespace=NS, top_k=1)]
            llm.inject(Fault(hold_after=1))
            async for event in kb.ask_stream(question, namespace=NS, top_k=1):
                assert event == AnswerDelta(text="Deploy ")
                break
            whole, left = await asyncio.to_thread(llm.ended_streams, 2)

    *deltas, done = events
    assert isinstance(done, AnswerDone)
    assert len(deltas) == len(done.answer.text.split()), "a delta a word"
    assert "".join(d.text for d in deltas if isinstance(d, AnswerDelta)) == done.answer.text
    assert done.answer.text == "Deploy a new key, then revoke the old one [1]."
    [citation] = done.answer.citations
    assert (citation.number, citation.document_id) == (1, "keys")
    assert not whole.hung_up
    assert left.hung_up
    assert left.sent == 1


async def test_stats_report_each_namespace(kb: KnowledgeBase, docs: Path) -> None:
    await kb.ingest([docs], namespace=NS, domain="software_docs")

    stats = await kb.stats()

    [namespace] = stats.namespaces
    assert (namespace.namespace, namespace.vector_count, namespace.chunk_count) == (NS, 2, 2)
    assert stats.status == "green"


async def test_a_set_allow_list_refuses_other_domains_naming_the_setting(
    stores: dict[str, object], docs: Path
) -> None:
    async with connect(**stores, allowed_domains=["weather_patterns"]) as kb:
        with pytest.raises(InvalidRequestError) as raised:
            await kb.ingest([docs], namespace=NS, domain="software_docs")
        refused = await kb.ingest([docs / "keys.md", FROST], namespace=NS)
    assert str(raised.value) == (
        "domains: domain software_docs is not in RETRIEVAL_ALLOWED_DOMAINS (weather_patterns)"
    )
    assert [o.document_id for o in refused.outcomes] == ["frost"]


async def test_an_override_that_names_no_setting_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="no such setting: data_directory"):
        async with connect(data_directory=tmp_path):
            pass


async def test_a_search_option_given_flat_is_refused_naming_where_it_goes() -> None:
    with pytest.raises(ConfigurationError) as refused:
        async with connect(search_mode="keyword"):
            pass
    assert str(refused.value) == (
        "no such setting: search_mode (search options are one setting: search={'mode': ...})"
    )


async def test_an_empty_or_blank_namespace_is_refused_never_the_default(
    kb: KnowledgeBase, docs: Path
) -> None:
    for namespace in ("", " "):
        for write in (
            kb.ingest([docs], namespace=namespace, domain="software_docs"),
            kb.sync([docs], namespace=namespace, domain="software_docs"),
        ):
            with pytest.raises(InvalidRequestError) as refused:
                await write
            assert refused.value.field == "namespace"
    assert await kb.documents() == []
