"""Two replicas over shared stores and an index that shows writes late: once the index shows
a write, no replica answers without it, from its result cache or its chunk text cache, and a
deleted document's text is never served."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import pytest
from dependency_injector import providers

from retrieval.domain.models import RetrievalOptions, SearchMode
from retrieval.lifecycle import Application, running
from retrieval.service.caching.freshness import NamespaceFreshness, NoIndexLsns
from retrieval.settings import Settings
from retrieval_testkit import (
    InMemoryChunkRepository,
    InMemoryDocumentLedger,
    InMemoryKeywordIndex,
)
from retrieval_testkit.container import in_memory_container
from retrieval_testkit.in_memory_namespace_generations import InMemoryNamespaceGenerations
from retrieval_testkit.in_memory_reranker import WordOverlapReranker
from retrieval_testkit.lagging_vector_index import LaggingVectorIndex
from retrieval_testkit.scripted_llm import ChatRequest, ScriptedLlm
from retrieval_testkit.versioned_document import OTHER, QUESTION, shows, version

NS = "replicas"
LAG_S = 0.3
SETTLE_S = 0.5
DENSE = RetrievalOptions(mode=SearchMode.DENSE)


@asynccontextmanager
async def replicas(
    tmp_path: Path, count: int = 2, **collaborators: object
) -> AsyncIterator[list[Application]]:
    """``count`` applications sharing every store, each with its own caches, and sharing
    ``collaborators`` (providers by name)."""
    index = LaggingVectorIndex(LAG_S)
    keywords = InMemoryKeywordIndex()
    chunks = InMemoryChunkRepository()
    ledger = InMemoryDocumentLedger()
    generations = InMemoryNamespaceGenerations()
    async with AsyncExitStack() as stack:
        apps = []
        for n in range(count):
            settings = Settings(_env_file=None, data_dir=tmp_path / f"replica-{n}")
            container = in_memory_container(
                settings,
                vector_index=index,
                keyword_index=keywords,
                chunk_repository=chunks,
                document_ledger=ledger,
                namespace_generations=generations,
                **collaborators,
            )
            container.freshness.override(
                providers.Object(NamespaceFreshness(generations, NoIndexLsns(), SETTLE_S))
            )
            apps.append(await stack.enter_async_context(running(settings, container)))
        yield apps


async def answer(app: Application, options: RetrievalOptions = DENSE) -> list[str]:
    result = await app.retrieval.retrieve(QUESTION, top_k=5, namespace=NS, options=options)
    assert not result.degraded
    return [match.content for match in result.matches]


async def test_an_update_is_answered_by_every_replica_once_the_index_shows_it(
    tmp_path: Path,
) -> None:
    async with replicas(tmp_path) as (writer, reader):
        await writer.ingestion.ingest([version("ONE"), OTHER], NS)
        await asyncio.sleep(LAG_S + SETTLE_S)
        assert shows(await answer(reader), "ONE")
        assert shows(await answer(reader), "ONE")

        await writer.ingestion.ingest([version("TWO")], NS)
        for app in (reader, writer):
            await answer(app)
        await asyncio.sleep(LAG_S + 0.05)
        for app in (reader, writer):
            contents = await answer(app)
            assert shows(contents, "TWO")
            assert not shows(contents, "ONE")


def every_passage(request: ChatRequest) -> str:
    """A judgement keeping every passage the model is shown."""
    return ", ".join(re.findall(r"^\[(\d+)\]", request.messages[-1].content, re.MULTILINE))


READING_STAGES = {
    "reranked": (
        DENSE.model_copy(update={"rerank": True}),
        {"reranker": WordOverlapReranker()},
    ),
    "filtered by the model": (
        DENSE.model_copy(update={"llm_filter": True}),
        {"llm": ScriptedLlm(every_passage)},
    ),
}


@pytest.mark.parametrize("stage", [None, *READING_STAGES])
async def test_an_updated_document_is_shown_throughout_in_its_current_version(
    tmp_path: Path, stage: str | None
) -> None:
    """While the index still returns the replaced version's chunk, whose text is gone, the
    current version's chunk at that position stands in: the document never drops out, also
    where a stage reads the texts before they are fetched (reranking, the model's filter)."""
    options, collaborators = READING_STAGES[stage] if stage else (DENSE, {})
    async with replicas(tmp_path, **collaborators) as (writer, reader):
        await writer.ingestion.ingest([version("ONE"), OTHER], NS)
        await asyncio.sleep(LAG_S + SETTLE_S)
        await writer.ingestion.ingest([version("TWO")], NS)
        for _ in range(3):
            for app in (reader, writer):
                contents = await answer(app, options)
                assert shows(contents, "TWO")
                assert not shows(contents, "ONE")
                assert sum(shows([content]) for content in contents) == 1
            await asyncio.sleep(LAG_S / 2)


async def test_a_deleted_document_is_never_served_with_its_text(tmp_path: Path) -> None:
    async with replicas(tmp_path) as (writer, reader):
        await writer.ingestion.ingest([version("ONE"), OTHER], NS)
        await asyncio.sleep(LAG_S + SETTLE_S)
        assert shows(await answer(reader), "ONE")

        await writer.library.delete(NS, ["d1"])
        for _ in range(3):
            for app in (reader, writer):
                assert not shows(await answer(app), "ONE")
            await asyncio.sleep(LAG_S / 2)


async def test_a_settled_namespace_is_served_from_the_caches(tmp_path: Path) -> None:
    async with replicas(tmp_path, count=1) as (app,):
        await app.ingestion.ingest([version("ONE"), OTHER], NS)
        await asyncio.sleep(LAG_S)
        retrieve = app.retrieval.retrieve
        asked = {"query": QUESTION, "top_k": 5, "namespace": NS, "options": DENSE}
        assert not (await retrieve(**asked)).cached
        assert not (await retrieve(**asked)).cached
        await asyncio.sleep(SETTLE_S)
        assert not (await retrieve(**asked)).cached
        assert (await retrieve(**asked)).cached
