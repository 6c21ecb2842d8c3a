"""The embedded keyword index searches a small namespace on the event loop and a large one,
or one whose BM25 model is not built yet, in a worker thread."""

from __future__ import annotations

import threading

import pytest

from retrieval.adapters.embedded_index import bm25_keyword_index
from retrieval.adapters.embedded_index.bm25_keyword_index import Bm25KeywordIndex, Snapshot
from retrieval.domain.keywords import KeywordRecord

RECORDS = [KeywordRecord(id=f"r{n}", text=f"tea leaf number {n}") for n in range(5)]


@pytest.fixture
def search_threads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    threads: list[int] = []
    search = Snapshot.search

    def recorded(snapshot: Snapshot, *args: object) -> list[tuple[str, float]]:
        threads.append(threading.get_ident())
        return search(snapshot, *args)

    monkeypatch.setattr(Snapshot, "search", recorded)
    return threads


@pytest.mark.parametrize("limit", [len(RECORDS), len(RECORDS) - 1])
async def test_only_a_small_namespace_with_its_model_built_is_searched_on_the_loop(
    monkeypatch: pytest.MonkeyPatch, search_threads: list[int], limit: int
) -> None:
    monkeypatch.setattr(bm25_keyword_index, "INLINE_SEARCH_RECORDS", limit)
    index = Bm25KeywordIndex()
    await index.upsert(RECORDS, "n")
    first = await index.query("tea leaf", top_k=3, namespace="n")
    second = await index.query("tea leaf", top_k=3, namespace="n")
    assert first == second
    assert len(first) == 3
    loop = threading.get_ident()
    assert search_threads[0] != loop, "the first search builds the model: not on the loop"
    assert (search_threads[1] == loop) is (limit >= len(RECORDS))
