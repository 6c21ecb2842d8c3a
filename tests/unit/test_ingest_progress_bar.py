"""The bar of ``retrieval ingest``: documents settled, chunks embedded of those to embed, the
rate and the time left; and a run whose cancellation a library swallowed stops at a report."""

from __future__ import annotations

import asyncio
import contextlib
import io

import pytest
from rich.console import Console

from retrieval.cli import documents
from retrieval.service.ingestion.outcomes import DocumentOutcome, Outcome


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def screen(monkeypatch: pytest.MonkeyPatch, clock: Clock) -> io.StringIO:
    """What a terminal of 200 columns shows, at the time ``clock`` says."""
    output = io.StringIO()
    terminal = Console(file=output, force_terminal=True, width=200, get_time=clock)
    monkeypatch.setattr(documents, "console", terminal)
    return output


def created(document_id: str, chunks: int) -> DocumentOutcome:
    return DocumentOutcome(document_id=document_id, outcome=Outcome.CREATED, chunks=chunks)


async def test_the_bar_moves_with_each_batch_embedded(screen: io.StringIO, clock: Clock) -> None:
    settled: list[DocumentOutcome] = []
    with documents.ingest_progress(3, settled) as progress:
        progress.to_embed(200)
        clock.now = 8.0
        progress.embedded(64)
        progress.settled([created("a", 40)])
        clock.now = 16.0
    shown = screen.getvalue()
    assert "1/3 documents" in shown
    assert "64/200 chunks · 4.0 chunks/s" in shown
    assert "eta 0:00:34" in shown
    assert settled == [created("a", 40)]


async def test_before_any_chunk_is_embedded_the_time_left_is_unknown(
    screen: io.StringIO, clock: Clock
) -> None:
    with documents.ingest_progress(2):
        clock.now = 5.0
    shown = screen.getvalue()
    assert "0/2 documents" in shown
    assert "0/? chunks · 0.0 chunks/s" in shown
    assert "eta -:--:--" in shown


async def test_a_report_raises_the_cancellation_a_library_swallowed(screen: io.StringIO) -> None:
    settled: list[DocumentOutcome] = []

    async def ingesting() -> None:
        with documents.ingest_progress(2, settled) as progress:
            asyncio.current_task().cancel()  # Ctrl-C
            # swallowed, as asyncio.wait_for does when its call completes at that moment
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(0)
            progress.settled([created("a", 3)])
            raise AssertionError("the run went on")

    with pytest.raises(asyncio.CancelledError):
        await asyncio.create_task(ingesting())
    assert settled == [created("a", 3)]
