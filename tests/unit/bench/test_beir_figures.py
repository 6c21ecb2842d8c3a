"""both@k and the figures of each query type in the BEIR benchmark, over in-memory stores."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from retrieval.evaluation.ablation import ablation_table
from retrieval.evaluation.metrics import all_relevant_at, rank_by_score
from retrieval.lifecycle import running
from retrieval.settings import Settings
from retrieval_bench.beir.data import (
    BeirDataset,
    BeirDocument,
    default_dataset_name,
    load_dataset,
    query_types,
    reference_figures,
)
from retrieval_bench.beir.figures import figures_by_type, ranking_figures
from retrieval_bench.beir.run import run_beir
from retrieval_testkit import InMemoryKeywordIndex
from retrieval_testkit.container import in_memory_container


def test_all_relevant_at_asks_for_every_relevant_document_in_the_first_k() -> None:
    qrels = {"b": 1, "c": 2, "x": 0}
    assert all_relevant_at(["a", "b", "c"], qrels, 2) == 0.0
    assert all_relevant_at(["a", "b", "c"], qrels, 3) == 1.0
    assert all_relevant_at(["c", "b"], qrels, 10) == 1.0
    assert all_relevant_at(["b", "x"], qrels, 10) == 0.0
    assert all_relevant_at(["x"], {"x": 0}, 10) == 0.0


def test_query_types_come_from_the_metadata() -> None:
    rows = [
        {"_id": "q1", "text": "a", "metadata": {"type": "bridge"}},
        {"_id": "q2", "text": "b", "metadata": {"type": "comparison"}},
        {"_id": "q3", "text": "c", "metadata": {"14717500": [{"sentences": [0]}]}},
        {"_id": "q4", "text": "d"},
    ]
    assert query_types(rows) == {"q1": "bridge", "q2": "comparison"}


@pytest.mark.parametrize(
    ("folder", "name"),
    [("../shared/data/beir/hotpotqa", "hotpotqa"), ("data/SciFact-v2", "scifact_v2")],
)
def test_the_report_is_named_after_the_dataset_folder(folder: str, name: str) -> None:
    assert default_dataset_name(Path(folder)) == name


def test_a_readme_without_recall_at_100_gives_no_reference_figures() -> None:
    readme = (
        "Measured outside the project: dense nDCG@10 0.840, both@10 0.793; "
        "BM25 0.769 / 0.735; fusion of the two 0.850 / 0.831."
    )
    assert reference_figures(readme) == []


RUN = {
    "q1": {"a": 3.0, "b": 2.0, "c": 1.0},
    "q2": {"d": 3.0, "x": 2.0, "y": 1.5, "z": 1.2, "w": 1.1, "e": 1.0},
    "q3": {"f": 1.0},
}
QRELS = {"q1": {"a": 1, "c": 1}, "q2": {"d": 1, "e": 1}, "q3": {"f": 1, "g": 1}}


def test_ranking_figures_average_both_at_k_over_the_queries() -> None:
    figures = ranking_figures(RUN, QRELS)
    assert figures.queries == 3
    assert figures.both_at_5 == pytest.approx(1 / 3)
    assert figures.both_at_10 == pytest.approx(2 / 3)
    assert figures.recall_at_100 == pytest.approx((1 + 1 + 0.5) / 3)


def test_figures_by_type_score_each_type_on_its_own_queries() -> None:
    by_type = figures_by_type(RUN, QRELS, {"q1": "bridge", "q2": "bridge", "q3": "comparison"})
    assert list(by_type) == ["bridge", "comparison"]
    assert (by_type["bridge"].queries, by_type["bridge"].both_at_10) == (2, 1.0)
    assert by_type["bridge"].both_at_5 == 0.5
    assert (by_type["comparison"].queries, by_type["comparison"].both_at_10) == (1, 0.0)
    assert figures_by_type(RUN, QRELS, {}) == {}


TWO_HOP = BeirDataset(
    corpus=[
        BeirDocument("kiss", "Kiss and Tell", "A comedy film starring Shirley Temple."),
        BeirDocument("temple", "Shirley Temple", "An actress who became an ambassador."),
        BeirDocument("tea", "Green tea", "Green tea is steamed after picking."),
        BeirDocument("black", "Black tea", "Black tea is fully oxidised."),
    ],
    queries={"q1": "kiss and tell actress ambassador", "q2": "green tea or black tea"},
    qrels={"q1": {"kiss": 1, "temple": 1}, "q2": {"tea": 1, "black": 1}},
    types={"q1": "bridge", "q2": "comparison"},
)


async def test_the_report_holds_both_at_k_overall_by_type_and_in_the_ablation(
    tmp_path: Path,
) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path)
    container = in_memory_container(settings, keyword_index=InMemoryKeywordIndex())
    async with running(settings, container) as app:
        report = await run_beir(app, TWO_HOP, name="two_hop", embeddings=None, rng=random.Random())

    rankings = {qid: rank_by_score(scores) for qid, scores in report.run.items()}
    expected = {qid: all_relevant_at(rankings[qid], TWO_HOP.qrels[qid], 10) for qid in rankings}
    assert report.both_at_10 == pytest.approx(sum(expected.values()) / 2)
    assert report.both_at_5 <= report.both_at_10
    assert set(report.by_type) == {"bridge", "comparison"}
    assert report.by_type["bridge"].both_at_10 == expected["q1"]
    assert report.ablation["default"].both_at_10 == report.both_at_10
    dumped = report.model_dump(mode="json")
    assert {"both_at_5", "both_at_10", "by_type"} <= dumped.keys()
    assert "both@10" in [column.header for column in ablation_table("x", report.ablation).columns]


def test_a_dataset_on_disk_carries_its_query_types(tmp_path: Path) -> None:
    (tmp_path / "qrels").mkdir()
    (tmp_path / "corpus.jsonl").write_text(json.dumps({"_id": "d1", "title": "t", "text": "x"}))
    (tmp_path / "queries.jsonl").write_text(
        json.dumps({"_id": "q1", "text": "x", "metadata": {"type": "bridge"}})
    )
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    dataset = load_dataset(
        tmp_path / "corpus.jsonl", tmp_path / "queries.jsonl", tmp_path / "qrels" / "test.tsv"
    )
    assert dataset.types == {"q1": "bridge"}
