"""Our side of the side-by-side benchmark on a tiny synthetic corpus, no peer installed: our run
through the service with cached query vectors, the real runner in a subprocess serving a
stand-in system, the rotating order, the figures and the report's shape."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

from retrieval.domain.models import RetrievalQuery, RetrievalResult
from retrieval.evaluation.beir_data import BeirDataset
from retrieval.evaluation.side_by_side import (
    OURS,
    REPORT_FILE,
    RUNNER,
    Interleaved,
    PeerRun,
    SideBySide,
    SystemFigures,
    ours_figures,
    peer_figures,
    peer_settings,
    ranked_run,
    run_side_by_side,
    write_report,
)
from retrieval.settings import Settings
from retrieval_testkit import HashEmbedder, InMemoryKeywordIndex
from retrieval_testkit.cohort_dataset import cohort_dataset
from retrieval_testkit.container import in_memory_container

QUERIES = {"q1": "aspirin trial", "q2": "malaria mosquito", "q3": "gout uric", "q4": "sepsis"}
QRELS = {"q1": {"d0": 1}, "q2": {"d2": 1, "d7": 1}, "q3": {"d6": 1}, "q4": {"d5": 2}}
FIGURES = {"ndcg_at_10", "recall_at_100", "p50_ms", "p95_ms"}


@pytest.fixture
def dataset() -> BeirDataset:
    return cohort_dataset(QUERIES, QRELS)


STAND_IN = """
import importlib.util, sys
from pathlib import Path
import numpy as np

spec = importlib.util.spec_from_file_location("runner", sys.argv[1])
runner = importlib.util.module_from_spec(spec)
spec.loader.exec_module(runner)


def exact(documents, passages, queries, top_k):
    ids = [doc_id for doc_id, _ in documents]
    matrix = np.array([passages[text] for _, text in documents])
    return lambda text: [ids[i] for i in np.argsort(-(matrix @ queries[text]))[:top_k]] + ids[:1]


runner.SYSTEMS["exact"] = exact
runner.LIBRARIES["exact"] = ("numpy",)
runner.serve("exact", Path(sys.argv[2]), sys.stdin, sys.stdout)
"""
"""The real runner serving a stand-in system: exact dot product, and a repeat at the end of
every ranking that the runner drops."""


async def test_ours_and_a_stand_in_peer_answer_every_query_with_the_same_vectors(
    dataset: BeirDataset, tmp_path: Path
) -> None:
    embedder = HashEmbedder()
    settings = peer_settings(Settings(data_dir=tmp_path, query_vector_cache_entries=0), 4)
    container = in_memory_container(
        settings, model_embedder=embedder, keyword_index=InMemoryKeywordIndex()
    )
    passages = await HashEmbedder().embed_passages([doc.passage for doc in dataset.corpus])
    (tmp_path / "stand_in.py").write_text(STAND_IN)
    peer_input = tmp_path / "peers"
    peer_input.mkdir()
    command = [sys.executable, str(tmp_path / "stand_in.py"), str(RUNNER), str(peer_input)]

    report, runs = await run_side_by_side(
        container, dataset, passages, peer_input, {"exact": command}, rng=random.Random(2)
    )

    assert settings.query_vector_cache_entries == 4
    assert embedder.queries == list(QUERIES.values())  # retrieve() found every vector cached
    ours = ours_figures(report)
    assert (ours.ndcg_at_10, ours.recall_at_100) == (report.ndcg_at_10, report.recall_at_100)
    assert 0 < ours.p50_ms <= ours.p95_ms == report.latency_ms["total"]["p95"]
    peer = runs["exact"]
    assert peer.library == f"numpy {np.__version__}"
    assert list(peer.rankings) == list(QRELS)
    assert len(peer.latency_ms) == len(QRELS)
    every_document = sorted(doc.doc_id for doc in dataset.corpus)
    assert all(sorted(ranking) == every_document for ranking in peer.rankings.values())
    for qid, text in QUERIES.items():
        vector = await HashEmbedder().embed_query(text)
        assert peer.rankings[qid][0] == dataset.corpus[int(np.argmax(passages @ vector))].doc_id
    assert peer_figures(peer, QRELS).recall_at_100 == 1.0


class Recorder:
    """Our service or a peer, writing down who was asked what."""

    def __init__(self, name: str, log: list[tuple[str, str]]) -> None:
        self.name, self.log = name, log
        self.library, self.index_s = f"{name} 1.0", 0.5

    async def retrieve_query(self, request: RetrievalQuery) -> RetrievalResult:
        self.log.append((self.name, request.query))
        return RetrievalResult(matches=(), total_matches=0, query=request.query, namespace="ns")

    async def ask(self, query: str) -> tuple[list[str], float]:
        self.log.append((self.name, query))
        return [f"{self.name}-doc"], float(len(self.log))


async def test_every_system_is_asked_each_query_in_a_rotating_order() -> None:
    log: list[tuple[str, str]] = []
    peers = {name: Recorder(name, log) for name in ("a", "b")}
    interleaved = Interleaved(Recorder(OURS, log), peers)

    for text in ("one", "two", "three", "four"):
        await interleaved.retrieve_query(RetrievalQuery(query=text))

    assert [name for name, _ in log] == [
        *(OURS, "a", "b"), *("a", "b", OURS), *("b", OURS, "a"), *(OURS, "a", "b"),
    ]  # fmt: skip
    run = interleaved.peer_run("b", {"one": "q1", "two": "q2", "three": "q3", "four": "q4"})
    assert run.rankings == {qid: ["b-doc"] for qid in ("q1", "q2", "q3", "q4")}
    assert run.latency_ms == [3.0, 5.0, 7.0, 12.0]
    assert (run.library, run.index_s) == ("b 1.0", 0.5)


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
