"""A tiny BEIR dataset: one short cohort-study document per topic, ``d0``, ``d1``, ... in
topic order, the judged queries given and one unjudged query."""

from __future__ import annotations

from retrieval.evaluation.beir_data import BeirDataset, BeirDocument

TOPICS = ("aspirin", "insulin", "malaria", "measles", "asthma", "sepsis", "gout", "rabies")


def cohort_dataset(queries: dict[str, str], qrels: dict[str, dict[str, int]]) -> BeirDataset:
    corpus = [
        BeirDocument(f"d{n}", f"{topic.title()} study", f"A cohort study of {topic} in adults.")
        for n, topic in enumerate(TOPICS)
    ]
    return BeirDataset(corpus, {**queries, "q9": "unjudged"}, qrels)
