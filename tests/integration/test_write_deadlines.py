"""Writes in process cancelled by a deadline while a store stalls: they end within their undo
time (``retrieval.deadlines``), the ledger left as the repair needs it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from retrieval.deadlines import undo_window
from retrieval.domain.models import RagDocument
from retrieval.lifecycle import Application, running
from retrieval.settings import Settings
from retrieval_testkit import InMemoryChunkRepository, InMemoryDocumentLedger, InMemoryVectorIndex
from retrieval_testkit.container import in_memory_container
from retrieval_testkit.stalls import Stall

NAMESPACE = "deadlines"
WORK_S = 0.5
UNDO_S = 0.1
FROST = RagDocument(
    document_id="frost",
    title="Frost",
    domain="weather_patterns",
    content="Ground frost scorches the plucking table of tea bushes on still winter nights.",
)
FROST_AGAIN = FROST.model_copy(
    update={"content": "Hoar frost settles on the hedges of the upper estate after clear dusk."}
)


@asynccontextmanager
async def holding_frost(
    tmp_path: Path, stall: Stall, **stalled: object
) -> AsyncIterator[Application]:
    settings = Settings(data_dir=tmp_path)
    replacements = {name: stall.wrap(double) for name, double in stalled.items()}
    async with running(settings, in_memory_container(settings, **replacements)) as app:
        await app.ingestion.ingest([FROST], NAMESPACE)
        try:
            yield app
        finally:
            stall.lift()


async def test_an_ingest_stopped_by_its_deadline_is_left_pending_and_recovered_to_the_old_version(
    tmp_path: Path,
) -> None:
    stall = Stall()
    async with holding_frost(tmp_path, stall, vector_index=InMemoryVectorIndex()) as app:
        stall.begin()
        started = time.monotonic()
        with pytest.raises(TimeoutError), undo_window(WORK_S, UNDO_S):
            async with asyncio.timeout(WORK_S):
                await app.ingestion.ingest([FROST_AGAIN], NAMESPACE)
        assert time.monotonic() - started < WORK_S + UNDO_S + 0.1
        assert [d.pending for d in await app.library.documents(NAMESPACE)] == [True]
        stall.lift()

        assert await app.repair.recover() == 1
        stored = await app.library.document(FROST.document_id, NAMESPACE)
        assert FROST.content in stored.chunks[0].content
        assert (await app.repair.reconcile(NAMESPACE, dry_run=True)).is_consistent


async def test_a_delete_stopped_by_its_deadline_before_its_records_are_retired_changes_nothing(
    tmp_path: Path,
) -> None:
    stall = Stall()
    mongodb = {
        "chunk_repository": InMemoryChunkRepository(),
        "document_ledger": InMemoryDocumentLedger(),
    }
    async with holding_frost(tmp_path, stall, **mongodb) as app:
        stall.begin()
        started = time.monotonic()
        with pytest.raises(TimeoutError), undo_window(WORK_S, UNDO_S):
            async with asyncio.timeout(WORK_S):
                await app.library.delete_document(FROST.document_id, NAMESPACE)
        assert time.monotonic() - started < WORK_S + UNDO_S + 0.1
        stall.lift()

        assert [d.document_id for d in await app.library.documents(NAMESPACE)] == ["frost"]
        assert (await app.repair.reconcile(NAMESPACE, dry_run=True)).is_consistent
