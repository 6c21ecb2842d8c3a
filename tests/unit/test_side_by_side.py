"""Our side of the side-by-side benchmark on a tiny synthetic corpus, no peer installed: our run
through the service with cached query vectors, the runner's input and output (driven with a
stand-in system), the figures and the report's shape."""

from __future__ import annotations

import importlib.util
import json
import random
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import pytrec_eval

from retrieval.evaluation.beir_data import BeirDataset, BeirDocument
from retrieval.evaluation.side_by_side import (
    REPORT_FILE,
    RUNNER,
    PeerRun,
    SideBySide,
    SystemFigures,
    ours_figures,
    peer_figures,
    peer_settings,
    ranked_run,
    run_ours,
    write_peer_input,
    write_report,
)
from retrieval.settings import Settings
from retrieval_testkit import HashEmbedder, InMemoryKeywordIndex
from retrieval_testkit.container import in_memory_container

TOPICS = ["aspirin", "insulin", "malaria", "measles", "asthma", "sepsis", "gout", "rabies"]
QUERIES = {"q1": "aspirin trial", "q2": "malaria mosquito", "q3": "gout uric", "q4": "sepsis"}
QRELS = {"q1": {"d0": 1}, "q2": {"d2": 1, "d7": 1}, "q3": {"d6": 1}, "q4": {"d5": 2}}
FIGURES = {"ndcg_at_10", "recall_at_100", "p50_ms", "p95_ms"}


@pytest.fixture
def dataset() -> BeirDataset:
    corpus = [
        BeirDocument(f"d{n}", f"{topic.title()} study", f"A cohort study of {topic} in adults.")
        for n, topic in enumerate(TOPICS)
    ]
    return BeirDataset(corpus, {**QUERIES, "q9": "unjudged"}, QRELS)


def load_runner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("peers_runner", RUNNER)
    assert spec is not None
    assert spec.loader is not None
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    return runner


def exact_search(
    documents: list[tuple[str, str]],
    passages: dict[str, list[float]],
    queries: dict[str, list[float]],
    top_k: int,
) -> Callable[[str], list[str]]:
    """A stand-in peer: exact dot product, and a repeat at the end that the runner drops."""
    ids = [doc_id for doc_id, _ in documents]
    matrix = np.array([passages[text] for _, text in documents])
    return lambda text: [ids[i] for i in np.argsort(-(matrix @ queries[text]))[:top_k]] + ids[:1]


async def test_ours_embeds_each_query_once_and_every_system_gets_those_vectors(
    dataset: BeirDataset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = HashEmbedder()
    settings = peer_settings(Settings(data_dir=tmp_path, query_vector_cache_entries=0), 4)
    container = in_memory_container(
        settings, model_embedder=embedder, keyword_index=InMemoryKeywordIndex()
    )
    passages = await HashEmbedder().embed_passages([doc.passage for doc in dataset.corpus])

    report, queries = await run_ours(container, dataset, passages, rng=random.Random(2))

    assert settings.query_vector_cache_entries == 4
    assert embedder.queries == list(QUERIES.values())  # retrieve() found every vector cached
    assert np.array_equal(queries[1], await HashEmbedder().embed_query(QUERIES["q2"]))
    ours = ours_figures(report)
    assert (ours.ndcg_at_10, ours.recall_at_100) == (report.ndcg_at_10, report.recall_at_100)
    assert 0 < ours.p50_ms <= ours.p95_ms == report.latency_ms["total"]["p95"]

    write_peer_input(tmp_path, dataset, passages, queries)
    runner = load_runner()
    monkeypatch.setitem(runner.SYSTEMS, "exact", exact_search)
    monkeypatch.setitem(runner.LIBRARIES, "exact", ("numpy",))
    runner.main("exact", tmp_path, tmp_path / "exact.json")
    peer = PeerRun.model_validate_json((tmp_path / "exact.json").read_text())

    assert peer.library == f"numpy {np.__version__}"
    assert list(peer.rankings) == list(QRELS)
    every_document = sorted(doc.doc_id for doc in dataset.corpus)
    assert all(sorted(ranking) == every_document for ranking in peer.rankings.values())
    assert len(peer.latency_ms) == len(QRELS)
    assert peer_figures(peer, QRELS).recall_at_100 == 1.0


def test_peer_figures_keep_the_peer_order_and_score_as_trec_eval(tmp_path: Path) -> None:
    qrels = {"q1": {"d5": 1}, "q2": {"d2": 2, "d3": 1}}
    peer = PeerRun(
        library="stand-in 1.0",
        index_s=0.1,
        rankings={"q1": ["d1", "d5"], "q2": ["d2"]},
        latency_ms=[10.0, 20.0, 30.0, 40.0],
    )
    figures = peer_figures(peer, qrels)

    ideal_q2 = 2 + 1 / np.log2(3)
    assert figures.ndcg_at_10 == pytest.approx((1 / np.log2(3) + 2 / ideal_q2) / 2)
    assert figures.recall_at_100 == pytest.approx((1 + 0.5) / 2)
    evaluated = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(
        ranked_run(peer.rankings)
    )
    assert figures.ndcg_at_10 == pytest.approx(
        sum(q["ndcg_cut_10"] for q in evaluated.values()) / 2
    )
    assert (figures.p50_ms, figures.p95_ms) == (25.0, pytest.approx(38.5))

    ours = SystemFigures(ndcg_at_10=0.7, recall_at_100=0.9, p50_ms=10.0, p95_ms=19.25)
    report = SideBySide(ours=ours, peers={"stand-in": figures})
    assert report.p95_ratios() == {"stand-in": pytest.approx(0.5)}
    write_report(tmp_path / "reports" / REPORT_FILE, report)
    payload = json.loads((tmp_path / "reports" / REPORT_FILE).read_text())
    assert set(payload) == {"ours", "peers"}
    assert payload["ours"] == ours.model_dump()
    assert set(payload["ours"]) == FIGURES
    assert set(payload["peers"]) == {"stand-in"}
    assert set(payload["peers"]["stand-in"]) == FIGURES
