"""``retrieval bench profile`` on a tiny corpus with in-memory stores, py-spy's stacks read
into hot functions, and py-spy sampling a real process."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from retrieval.settings import Settings
from retrieval_bench.beir.data import BeirDataset
from retrieval_bench.profile import (
    HotFrame,
    hot_frames,
    profile_retrieval,
    profile_settings,
    py_spy_executable,
    sampling,
)
from retrieval_testkit import HashEmbedder, InMemoryChunkRepository, InMemoryKeywordIndex
from retrieval_testkit.container import in_memory_container

QUERIES = {"q1": "aspirin trial", "q2": "malaria mosquito", "q3": "gout uric"}
QRELS = {"q1": {"d0": 1}, "q2": {"d2": 1}, "q3": {"d6": 1}}
SPINNER = "def spin():\n    while True:\n        sum(range(1000))\n\nspin()\n"


@pytest.fixture
def dataset(cohort_dataset: Callable[..., BeirDataset]) -> BeirDataset:
    return cohort_dataset(QUERIES, QRELS)


async def test_every_query_is_timed_each_round_on_cached_vectors_and_uncached_results(
    dataset: BeirDataset, tmp_path: Path
) -> None:
    embedder = HashEmbedder()
    chunks = InMemoryChunkRepository()
    settings = profile_settings(
        Settings(data_dir=tmp_path, result_cache_entries=64, query_vector_cache_entries=0),
        len(QUERIES),
    )
    container = in_memory_container(
        settings, model_embedder=embedder, keyword_index=InMemoryKeywordIndex(),
        chunk_repository=chunks,
    )  # fmt: skip
    passages = await HashEmbedder().embed_passages([doc.passage for doc in dataset.corpus])

    report = await profile_retrieval(container, dataset, passages, tmp_path, rounds=2, sample=False)

    assert (settings.result_cache_entries, settings.query_vector_cache_entries) == (0, 3)
    assert embedder.queries == list(QUERIES.values())  # embedded once, in the warm-up
    assert report.queries == 2 * len(QUERIES)
    assert {"search", "fuse", "fetch", "total"} <= set(report.latency_ms)
    assert 0 < report.latency_ms["total"]["p50"] <= report.latency_ms["total"]["p95"]
    assert set(report.cpu_ms_per_call) == {"client"}  # no MongoDB server runs here
    assert report.processes == {}
    assert await chunks.count() == 0  # the namespace is removed


def test_hot_frames_share_own_and_inclusive_samples_counting_recursion_once() -> None:
    stacks = (
        "main (app.py);parse (app.py);decode (bson.py) 1\n"
        "main (app.py);parse (app.py) 1\n"
        "main (app.py);parse (app.py);parse (app.py) 2\n"
        "\n"
        "main (app.py);send (net.py) 6\n"
    )
    profile = hot_frames(stacks, top=3)
    assert profile.samples == 10
    assert profile.by_own == (
        HotFrame(function="send (net.py)", own=0.6, total=0.6),
        HotFrame(function="parse (app.py)", own=0.3, total=0.4),
        HotFrame(function="decode (bson.py)", own=0.1, total=0.1),
    )
    assert [(frame.function, frame.total) for frame in profile.by_total] == [
        ("main (app.py)", 1.0),
        ("send (net.py)", 0.6),
        ("parse (app.py)", 0.4),
    ]


def test_py_spy_samples_a_running_process_by_pid(tmp_path: Path) -> None:
    executable = py_spy_executable()
    assert executable is not None, "py-spy is a development dependency"
    spinner = subprocess.Popen([sys.executable, "-c", SPINNER])
    try:
        with sampling(executable, {"spinner": spinner.pid}, tmp_path) as outputs:
            time.sleep(2.0)
    finally:
        spinner.kill()
        spinner.wait()
    profile = hot_frames(outputs["spinner"].read_text(encoding="utf-8"), top=5)
    assert profile.samples > 0
    assert any(frame.function.startswith("spin ") for frame in profile.by_total)
