"""The embedded keyword index sums BM25's precomputed term scores itself: the scores must be
those bm25s computes, repeated and unknown terms included."""

from __future__ import annotations

import random

import bm25s
import numpy as np
import pytest

from retrieval.adapters.embedded_index.bm25_keyword_index import relevance


@pytest.fixture(scope="module")
def model() -> bm25s.BM25:
    words = random.Random(3)
    corpus = [
        [f"w{words.randrange(300)}" for _ in range(words.randrange(1, 60))] for _ in range(400)
    ]
    vocabulary: dict[str, int] = {}
    ids = [[vocabulary.setdefault(term, len(vocabulary)) for term in text] for text in corpus]
    built = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    built.index((ids, vocabulary), show_progress=False)
    return built


@pytest.mark.parametrize(
    "query",
    [["w1"], ["w7", "w19", "w250"], ["w3", "w3", "w40"], ["w5", "unknown", "w9"]],
    ids=["one term", "several", "a repeated term", "an unknown term"],
)
def test_scores_are_bm25s_own(model: bm25s.BM25, query: list[str]) -> None:
    expected = model.get_scores(query)
    assert relevance(model, query) == pytest.approx(expected, rel=1e-5, abs=1e-6)
    assert np.count_nonzero(expected) > 0


def test_a_query_of_unknown_terms_scores_nothing(model: bm25s.BM25) -> None:
    scores = relevance(model, ["unknown", "absent"])
    assert scores.shape == (400,)
    assert not scores.any()
