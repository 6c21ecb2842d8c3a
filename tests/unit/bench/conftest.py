"""A tiny BEIR dataset for the benchmarks' tests: one short cohort-study document per topic,
``d0``, ``d1``, ... in topic order, the judged queries a test gives and one unjudged query."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from retrieval_bench.beir.data import BeirDataset, BeirDocument

TOPICS = ("aspirin", "insulin", "malaria", "measles", "asthma", "sepsis", "gout", "rabies")
CohortDataset = Callable[[dict[str, str], dict[str, dict[str, int]]], BeirDataset]


def cohort(queries: dict[str, str], qrels: dict[str, dict[str, int]]) -> BeirDataset:
    corpus = [
        BeirDocument(f"d{n}", f"{topic.title()} study", f"A cohort study of {topic} in adults.")
        for n, topic in enumerate(TOPICS)
    ]
    return BeirDataset(corpus, {**queries, "q9": "unjudged"}, qrels)


@pytest.fixture
def cohort_dataset() -> CohortDataset:
    return cohort
