"""Two replicas over shared stores and the Pinecone stand-ins, the sparse keyword index showing
writes late while the dense index shows them at once: a retrieval is settled only once every
index it asked answered at or above what was written to that index. Until the sparse index
shows an update, the keyword match of the replaced chunk it still returns is neither served
from the chunk text cache nor kept in the result cache."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import pytest

from retrieval.lifecycle import Application, running
from retrieval.settings import Settings
from retrieval_testkit import InMemoryChunkRepository, InMemoryDocumentLedger
from retrieval_testkit.container import without_mongodb
from retrieval_testkit.in_memory_namespace_generations import InMemoryNamespaceGenerations
from retrieval_testkit.pinecone_standin import PineconeStandIn
from retrieval_testkit.versioned_document import OTHER, QUESTION, shows, version

NS = "keywords"
LAG_S = 1.5
WINDOW_S = 60.0
"""Longer than the test: the LSNs alone decide when the namespace settles."""
POLL_S = 0.1


@pytest.fixture
def standins() -> Iterator[tuple[PineconeStandIn, PineconeStandIn]]:
    """The dense index (at once) and the sparse index (``LAG_S`` late)."""
    with (
        PineconeStandIn(dimension=1024) as dense,
        PineconeStandIn(vector_type="sparse", lag_seconds=LAG_S) as sparse,
    ):
        yield dense, sparse


@asynccontextmanager
async def replicas(
    tmp_path: Path, dense: PineconeStandIn, sparse: PineconeStandIn
) -> AsyncIterator[list[Application]]:
    """A writer and a reader on the stand-ins, sharing chunk texts, ledger and generations."""
    shared = {
        "chunk_repository": InMemoryChunkRepository(),
        "document_ledger": InMemoryDocumentLedger(),
        "namespace_generations": InMemoryNamespaceGenerations(),
    }
    async with AsyncExitStack() as stack:
        apps = []
        for n in range(2):
            settings = Settings(
                _env_file=None,
                data_dir=tmp_path / f"replica-{n}",
                index_backend="pinecone",
                embedder_backend="pinecone",
                pinecone_api_key=dense.api_key,
                pinecone_index_host=dense.url,
                pinecone_sparse_index_host=sparse.url,
                pinecone_control_host=dense.url,
                index_freshness_s=WINDOW_S,
            )
            container = without_mongodb(settings, **shared)
            apps.append(await stack.enter_async_context(running(settings, container)))
        yield apps


async def test_a_keyword_match_of_a_replaced_chunk_is_not_kept_while_the_sparse_index_lags(
    tmp_path: Path, standins: tuple[PineconeStandIn, PineconeStandIn]
) -> None:
    async with replicas(tmp_path, *standins) as (writer, reader):
        await writer.ingestion.ingest([version("ONE"), OTHER], NS)
        await asyncio.sleep(LAG_S + POLL_S)
        served = await reader.retrieval.retrieve(QUESTION, top_k=5, namespace=NS)
        assert shows([match.content for match in served.matches], "ONE")
        assert (await reader.retrieval.retrieve(QUESTION, top_k=5, namespace=NS)).cached

        await writer.ingestion.ingest([version("TWO")], NS)
        updated = time.monotonic()
        answers = []
        while time.monotonic() - updated < LAG_S - 2 * POLL_S:
            answers.append(await reader.retrieval.retrieve(QUESTION, top_k=5, namespace=NS))
            await asyncio.sleep(POLL_S)
        assert len(answers) > 3
        assert [shows([m.content for m in answer.matches], "ONE") for answer in answers] == [
            False
        ] * len(answers), "the replaced chunk's text came from the chunk text cache"
        assert not any(answer.cached for answer in answers)

        await asyncio.sleep(LAG_S)
        for _ in range(2):
            settled = await reader.retrieval.retrieve(QUESTION, top_k=5, namespace=NS)
            contents = [match.content for match in settled.matches]
            assert shows(contents, "TWO")
            assert not shows(contents, "ONE")
        assert settled.cached
