"""The concurrency benchmark measures what it says: every question asked once by the raw
embedder and once by the service (no cache answers), as many callers as asked for, the lag
of a loop that blocks, and a thread setting chosen only when it is clearly better."""

from __future__ import annotations

import asyncio
import gc
import time
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from functools import partial
from pathlib import Path

import pytest

from retrieval.adapters.files.document_files import load_documents
from retrieval.demo import KNOWLEDGE_DIR
from retrieval.domain.graph import GraphRecord
from retrieval.lifecycle import resolve, running
from retrieval.settings import Settings
from retrieval_bench import concurrency
from retrieval_bench.concurrency import (
    LAG_PERIOD_S,
    TOP_K,
    LoopLagProbe,
    Target,
    calls_at,
    drive,
    measure_levels,
    measure_threads,
    unique_questions,
    warm_up,
)
from retrieval_bench.thread_settings import (
    SERVICE_SETTING,
    best_setting,
    chunk_reads,
    schedule,
)
from retrieval_testkit import HashEmbedder, InMemoryGraphStore, InMemoryKeywordIndex
from retrieval_testkit.container import in_memory_container

NS = "bench"


class CountedGraphStore(InMemoryGraphStore):
    """The in-memory graph store, counting the chunks whose records were asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.records_read = 0

    async def get_many(self, ids: Sequence[str], namespace: str) -> dict[str, GraphRecord]:
        self.records_read += len(ids)
        return await super().get_many(ids, namespace)


@pytest.fixture
async def target(tmp_path: Path) -> AsyncIterator[tuple[Target, HashEmbedder]]:
    """The service over the in-memory stores and the hash embedder, caches off, with the
    bundled knowledge base ingested."""
    settings = Settings(data_dir=tmp_path, result_cache_entries=0, query_vector_cache_entries=0)
    model = HashEmbedder()
    container = in_memory_container(
        settings,
        model_embedder=model,
        keyword_index=InMemoryKeywordIndex(),
        graph_store=CountedGraphStore(),
    )
    async with running(settings, container) as app:
        await app.ingestion.ingest(load_documents([KNOWLEDGE_DIR]), NS)
        plan = await resolve(container.search_plan)
        model.queries.clear()
        yield (
            Target(
                retrieval=app.retrieval,
                raw=model,
                index=await resolve(container.vector_index),
                namespace=NS,
                depth=plan.depth(TOP_K),
                passages=("first passage", "second passage"),
                store_cpu_s=lambda: 0.0,
                chunk_reads=partial(chunk_reads, app.telemetry.metrics.chunk_cache_lookups),
                chunks=await resolve(container.chunk_text_cache),
                leads=await resolve(container.graph_leads),
            ),
            model,
        )


async def test_a_blocked_loop_shows_as_lag_and_a_collection_as_a_pause() -> None:
    block_s = 0.05
    callbacks = list(gc.callbacks)
    async with LoopLagProbe() as probe:
        await asyncio.sleep(LAG_PERIOD_S)
        time.sleep(block_s)  # noqa: ASYNC251 - the block the probe must see
        gc.collect()
        await asyncio.sleep(2 * LAG_PERIOD_S)
    assert max(probe.lags_ms) >= (block_s - LAG_PERIOD_S) * 1e3
    assert probe.gc_pauses_ms
    assert probe.loop_cpu_s > 0
    assert gc.callbacks == callbacks


async def test_callers_share_the_questions_each_asked_once() -> None:
    asked = unique_questions(23, "t")
    running_now = peak = 0
    answered: list[str] = []

    async def call(question: str) -> str:
        nonlocal running_now, peak
        running_now += 1
        peak = max(peak, running_now)
        await asyncio.sleep(0)
        running_now -= 1
        answered.append(question)
        return question

    run = await drive(call, asked, callers=5)
    assert sorted(answered) == sorted(asked) == sorted(run.results)
    assert len(set(asked)) == len(asked)
    assert peak == 5
    assert len(run.latencies_ms) == len(asked)


async def test_each_level_asks_the_embedder_and_the_service_the_same_new_questions(
    target: tuple[Target, HashEmbedder],
) -> None:
    bench, model = target
    figures = await measure_levels(bench, (1, 4), calls=6)
    levels = figures["levels"]
    assert list(levels) == ["1", "4"]
    assert [level["calls"] for level in levels.values()] == [calls_at(1, 6), calls_at(4, 6)]
    asked = Counter(model.queries)
    assert set(asked.values()) == {2}, "each question: once by the ceiling, once by the service"
    assert sum(asked.values()) == 2 * sum(level["calls"] for level in levels.values())
    for level in levels.values():
        assert level["ratio"] == pytest.approx(level["throughput_per_s"] / level["ceiling_per_s"])
    shares = [level["chunk_cache_hit_share"] for level in levels.values()]
    assert shares[0] < 1, "the first call reads every text from the store"
    assert 0 < shares[1] <= 1, "texts read by the first level are kept"


async def test_after_the_warm_up_every_chunk_text_comes_from_the_cache(
    target: tuple[Target, HashEmbedder],
) -> None:
    service, _ = target
    await warm_up(service)
    figures = await measure_levels(service, (2,), calls=6)
    assert figures["levels"]["2"]["chunk_cache_hit_share"] == 1.0


async def test_after_the_warm_up_the_second_hop_reads_no_graph_record_from_the_store(
    target: tuple[Target, HashEmbedder], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever the warm-up's own calls happened to read: with none, still no record read."""
    service, _ = target
    monkeypatch.setattr(concurrency, "WARM_UP_CALLS", 0)
    await warm_up(service)
    graph = service.leads.graph
    assert isinstance(graph, CountedGraphStore)
    warm = graph.records_read
    await measure_levels(service, (2,), calls=6)
    assert graph.records_read == warm


async def test_the_thread_figures_come_from_the_service_and_the_index(
    target: tuple[Target, HashEmbedder],
) -> None:
    bench, model = target
    figures = await measure_threads(bench, calls=4, busy_callers=2, busy_calls=6)
    assert figures["busy_callers"] == 2
    assert figures["passages_per_s"] > 0
    assert figures["busy_throughput_per_s"] > 0
    assert model.passages[-2:] == list(bench.passages)
    assert len(model.queries) == 4 + 4 + 6, "the index's own searches, one caller, two callers"


def test_a_setting_must_be_clearly_better_for_many_callers_and_no_worse_otherwise() -> None:
    def figures(calls_per_s: float, one_caller_ms: float, passages_per_s: float) -> dict:
        return {
            "busy_throughput_per_s": calls_per_s,
            "retrieve_p50_ms": one_caller_ms,
            "passages_per_s": passages_per_s,
        }

    threads = {
        SERVICE_SETTING: figures(50, 20, 10),
        "within the noise": figures(54, 18, 10),
        "slower for one caller": figures(80, 21, 10),
        "slower ingestion": figures(90, 15, 5),
    }
    assert best_setting(threads) == SERVICE_SETTING
    assert best_setting({**threads, "better": figures(60, 20, 9)}) == "better"


def test_every_setting_runs_each_pass_in_alternating_order() -> None:
    assert schedule(["a", "b", "c"], 3) == ["a", "b", "c", "c", "b", "a", "a", "b", "c"]
