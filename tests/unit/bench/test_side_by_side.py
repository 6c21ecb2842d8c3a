"""Our side of the side-by-side benchmark on a tiny synthetic corpus, no peer installed: our run
through the service with cached query vectors, the real runner in a subprocess serving a
stand-in system, the rotating order, the figures, each library's default and best
configuration, and the report's shape."""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from rich.console import Console

from retrieval.domain.models import RetrievalQuery, RetrievalResult
from retrieval.settings import Settings
from retrieval_bench.beir.data import BeirDataset
from retrieval_bench.cli.peers import side_by_side_table
from retrieval_bench.peers.runner import CONFIGURATIONS, check_modes
from retrieval_bench.peers.side_by_side import (
    BEST,
    OURS,
    RUNNER,
    Interleaved,
    LibraryFigures,
    PeerRun,
    SideBySide,
    SystemFigures,
    best_configuration,
    figure_rows,
    library_figures,
    ours_figures,
    peer_commands,
    peer_figures,
    peer_settings,
    ranked_run,
    report_file,
    run_side_by_side,
    several_relevant,
    side_by_side,
    write_report,
)
from retrieval_testkit import HashEmbedder, InMemoryKeywordIndex
from retrieval_testkit.container import in_memory_container

QUERIES = {"q1": "aspirin trial", "q2": "malaria mosquito", "q3": "gout uric", "q4": "sepsis"}
QRELS = {"q1": {"d0": 1}, "q2": {"d2": 1, "d7": 1}, "q3": {"d6": 1}, "q4": {"d5": 2}}
FIGURES = {"ndcg_at_10", "recall_at_100", "both_at_5", "both_at_10", "p50_ms", "p95_ms"}


@pytest.fixture
def dataset(cohort_dataset: Callable[..., BeirDataset]) -> BeirDataset:
    return cohort_dataset(QUERIES, QRELS)


STAND_IN = """
import importlib.util, sys
from pathlib import Path
import numpy as np

spec = importlib.util.spec_from_file_location("runner", sys.argv[1])
runner = importlib.util.module_from_spec(spec)
spec.loader.exec_module(runner)


def exact(configuration, documents, passages, queries, top_k):
    ids = [doc_id for doc_id, _ in documents]
    matrix = np.array([passages[text] for _, text in documents])
    return lambda text: [ids[i] for i in np.argsort(-(matrix @ queries[text]))[:top_k]] + ids[:1]


runner.SYSTEMS["exact"] = exact
runner.LIBRARIES["exact"] = ("numpy",)
runner.CONFIGURATIONS["exact"] = ("dot",)
runner.serve("exact", sys.argv[2], Path(sys.argv[3]), sys.stdin, sys.stdout)
"""
"""The real runner serving a stand-in system in its one configuration: exact dot product, and a
repeat at the end of every ranking that the runner drops."""


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
    command = [sys.executable, str(tmp_path / "stand_in.py"), str(RUNNER), "dot", str(peer_input)]

    report, runs = await run_side_by_side(
        container, dataset, passages, peer_input, {"exact/dot": command}, rng=random.Random(2)
    )

    assert settings.query_vector_cache_entries == 4
    assert embedder.queries == list(QUERIES.values())  # retrieve() found every vector cached
    ours = ours_figures(report)
    assert (ours.ndcg_at_10, ours.recall_at_100) == (report.ndcg_at_10, report.recall_at_100)
    assert 0 < ours.p50_ms <= ours.p95_ms == report.latency_ms["total"]["p95"]
    peer = runs["exact/dot"]
    assert peer.library == f"numpy {np.__version__}"
    assert list(peer.rankings) == list(QRELS)
    assert len(peer.latency_ms) == len(QRELS)
    every_document = sorted(doc.doc_id for doc in dataset.corpus)
    assert all(sorted(ranking) == every_document for ranking in peer.rankings.values())
    for qid, text in QUERIES.items():
        vector = await HashEmbedder().embed_query(text)
        assert peer.rankings[qid][0] == dataset.corpus[int(np.argmax(passages @ vector))].doc_id
    assert peer_figures(peer, QRELS).recall_at_100 == 1.0
    written = side_by_side("cohort", dataset, report, runs)
    assert (written.dataset, written.queries, written.documents) == ("cohort", 4, 8)
    assert written.ours == ours
    assert written.peers["exact"].default == written.peers["exact"].best == "dot"


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


def test_peer_figures_keep_the_peer_order_and_score_as_trec_eval() -> None:
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
    assert (figures.both_at_5, figures.both_at_10) == (0.5, 0.5)  # q2 misses d3
    evaluated = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(
        ranked_run(peer.rankings)
    )
    assert figures.ndcg_at_10 == pytest.approx(
        sum(q["ndcg_cut_10"] for q in evaluated.values()) / 2
    )
    assert (figures.p50_ms, figures.p95_ms) == (25.0, pytest.approx(38.5))


def scored(ndcg_at_10: float, p95_ms: float = 40.0) -> SystemFigures:
    return SystemFigures(
        ndcg_at_10=ndcg_at_10, recall_at_100=0.9, both_at_5=0.6, both_at_10=0.7, p50_ms=20.0,
        p95_ms=p95_ms,
    )  # fmt: skip


def test_the_best_configuration_has_the_highest_ndcg_and_a_tie_keeps_the_first() -> None:
    assert best_configuration({"a": scored(0.6), "b": scored(0.7), "c": scored(0.65)}) == "b"
    assert best_configuration({"default": scored(0.7), "other": scored(0.7)}) == "default"


def test_runs_are_put_together_by_library_with_the_default_first_and_the_best_scored() -> None:
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}

    def run(library: str, *rankings: list[str]) -> PeerRun:
        return PeerRun(
            library=library,
            index_s=1.0,
            rankings=dict(zip(qrels, rankings, strict=True)),
            latency_ms=[5.0, 7.0],
        )

    libraries = library_figures(
        {
            "one/plain": run("one 1.0", ["d9", "d1"], ["d2"]),
            "one/fused": run("one 1.0", ["d1"], ["d2"]),
            "one/other": run("one 1.0", ["d9"], ["d9"]),
            "two/only": run("two 2.0", ["d1"], ["d9"]),
        },
        qrels,
    )

    assert list(libraries) == ["one", "two"]
    one = libraries["one"]
    assert (one.library, one.default, one.best) == ("one 1.0", "plain", "fused")
    assert list(one.configurations) == ["plain", "fused", "other"]
    assert one.configurations["fused"].ndcg_at_10 == 1.0
    assert one.configurations["other"].ndcg_at_10 == 0.0
    assert (libraries["two"].default, libraries["two"].best) == ("only", "only")


def test_ours_is_read_against_each_library_in_its_best_configuration() -> None:
    report = SideBySide(
        dataset="multihop",
        queries=2,
        documents=10,
        several_relevant=True,
        ours=scored(0.72, p95_ms=10.0),
        peers={
            "lib": LibraryFigures(
                library="lib 1.0",
                default="rrf",
                best="dbsf",
                configurations={"rrf": scored(0.60, 20.0), "dbsf": scored(0.80, 50.0)},
            ),
            "solo": LibraryFigures(
                library="solo 1.0",
                default="only",
                best="only",
                configurations={"only": scored(0.50, 100.0)},
            ),
        },
    )

    assert report.ratios("ndcg_at_10") == {"lib": pytest.approx(0.9), "solo": pytest.approx(1.44)}
    assert report.ratios("p95_ms") == {"lib": pytest.approx(0.2), "solo": pytest.approx(0.1)}
    assert [row[:3] for row in figure_rows(report)] == [
        [OURS, "default", "0.7200"],
        ["lib", "rrf", "0.6000"],
        [BEST, "dbsf", "0.8000"],
        ["solo", "only", "0.5000"],
    ]
    assert figure_rows(report)[2][2:] == ["0.8000", "0.9000", "0.6000", "0.7000", "50.0"]
    single = report.model_copy(update={"several_relevant": False})
    assert figure_rows(single)[2][2:] == ["0.8000", "0.9000", "50.0"]


def test_the_report_is_named_after_the_dataset_and_holds_every_configuration(
    tmp_path: Path,
) -> None:
    peer = LibraryFigures(
        library="lib 1.0",
        default="rrf",
        best="dbsf",
        configurations={"rrf": scored(0.6), "dbsf": scored(0.8)},
    )
    report = SideBySide(
        dataset="scifact", queries=300, documents=5183, several_relevant=False,
        ours=scored(0.72), peers={"lib": peer},
    )  # fmt: skip
    target = tmp_path / "reports" / report_file("scifact")
    write_report(target, report)

    assert target.name == "peers-scifact.json"
    payload = json.loads(target.read_text())
    assert set(payload) == {
        "dataset", "queries", "documents", "several_relevant", "ours", "peers",
    }  # fmt: skip
    assert set(payload["ours"]) == FIGURES
    assert payload["peers"]["lib"]["default"] == "rrf"
    assert payload["peers"]["lib"]["best"] == "dbsf"
    assert {name: set(f) for name, f in payload["peers"]["lib"]["configurations"].items()} == {
        "rrf": FIGURES,
        "dbsf": FIGURES,
    }
    assert SideBySide.model_validate(payload) == report


def test_both_at_k_is_shown_when_most_queries_have_several_relevant_documents() -> None:
    assert not several_relevant(QRELS)  # one query of four has two
    assert several_relevant({"q1": {"a": 1, "b": 1}, "q2": {"c": 1, "d": 1}, "q3": {"e": 1}})
    assert not several_relevant({"q1": {"a": 1, "b": 0}, "q2": {"c": 1}})  # b is not relevant


def test_every_configuration_of_each_library_gets_a_runner_default_first(tmp_path: Path) -> None:
    commands = peer_commands(tmp_path / "python", tmp_path / "input")

    assert list(commands) == [
        f"{system}/{configuration}"
        for system, configurations in CONFIGURATIONS.items()
        for configuration in configurations
    ]
    assert commands["llamaindex/dist_based_score"] == [
        str(tmp_path / "python"), str(RUNNER), "llamaindex", "dist_based_score",
        str(tmp_path / "input"),
    ]  # fmt: skip
    assert CONFIGURATIONS["llamaindex"][0] == "simple"
    assert CONFIGURATIONS["haystack"][0] == "concatenate"
    assert len(commands) == 10


def test_the_runner_refuses_a_library_whose_modes_or_default_it_does_not_list() -> None:
    check_modes("haystack", reversed(CONFIGURATIONS["haystack"]), "concatenate")
    with pytest.raises(RuntimeError, match=r"offers \[.*'new_mode'"):
        check_modes("haystack", iter([*CONFIGURATIONS["haystack"], "new_mode"]), "concatenate")
    with pytest.raises(RuntimeError, match="default merge"):
        check_modes("haystack", CONFIGURATIONS["haystack"], "merge")


def test_the_printed_table_fits_80_columns() -> None:
    longest = max((name for names in CONFIGURATIONS.values() for name in names), key=len)
    peers = {
        system: LibraryFigures(
            library=f"{system} 1.0",
            default=names[0],
            best=longest,
            configurations={names[0]: scored(0.6, 1234.5), longest: scored(0.7, 1234.5)},
        )
        for system, names in CONFIGURATIONS.items()
    }
    report = SideBySide(
        dataset="hotpotqa", queries=300, documents=7883, several_relevant=True,
        ours=scored(0.72), peers=peers,
    )  # fmt: skip
    console = Console(width=80, record=True)

    console.print(side_by_side_table(report))

    lines = console.export_text().splitlines()
    assert max(len(line) for line in lines) <= 80
    rows = [line.split() for line in lines]
    assert ["system", "configuration", "nDCG@10", "R@100", "both@5", "both@10", "p95", "ms"] in rows
    assert [OURS, "default", "0.7200", "0.9000", "0.6000", "0.7000", "40.0"] in rows
    best = [BEST, longest, "0.7000", "0.9000", "0.6000", "0.7000", "1234.5"]
    assert sum(row == best for row in rows) == len(CONFIGURATIONS)  # never cut or wrapped
