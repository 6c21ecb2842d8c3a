"""What every Reranker must do. Subclass and provide a ``reranker`` fixture.

Scores differ between models, so only clear-cut orders are asserted: the answering passage
shares most of the query's very words (no stemming or stopword list changes the outcome)
and the others are plainly about something else, so a word-overlap scorer and a real
cross-encoder agree. ``LARGE`` holds more passages than one Pinecone call of
``bge-reranker-v2-m3`` takes (100), its answer past the first hundred.
"""

from __future__ import annotations

import pytest

from retrieval.errors import InvalidRequestError
from retrieval.ports.reranker import Reranker

QUERY = "what causes blister blight on tea leaves"
PASSAGES = [
    "Frost damages tea bushes in high gardens during clear winter nights.",
    "Blister blight on tea leaves is caused by the fungus Exobasidium vexans.",
    "Orthodox black tea is graded by leaf size.",
]
ANSWER = 1
"""The passage of ``PASSAGES`` that answers ``QUERY``."""

LARGE_ANSWER, LARGE_RELATED = 137, 3
LARGE = [f"Invoice {n} lists garden tools and delivery dates." for n in range(150)]
LARGE[LARGE_ANSWER] = PASSAGES[ANSWER]
LARGE[LARGE_RELATED] = "Tea leaves are picked by hand in the morning."


class RerankerContract:
    async def test_the_passage_that_answers_ranks_first(self, reranker: Reranker) -> None:
        ranked = await reranker.rerank(QUERY, PASSAGES, len(PASSAGES))
        assert ranked[0].index == ANSWER
        assert ranked[0].score > ranked[1].score

    async def test_top_n_keeps_the_best(self, reranker: Reranker) -> None:
        everything = await reranker.rerank(QUERY, PASSAGES, len(PASSAGES))
        best = await reranker.rerank(QUERY, PASSAGES, 2)
        assert [p.index for p in best] == [p.index for p in everything[:2]]

    async def test_all_passages_come_back_when_fewer_than_top_n(self, reranker: Reranker) -> None:
        ranked = await reranker.rerank(QUERY, PASSAGES, 10)
        assert sorted(p.index for p in ranked) == [0, 1, 2]

    async def test_each_index_once_in_range_scores_descending(self, reranker: Reranker) -> None:
        ranked = await reranker.rerank(QUERY, LARGE, len(LARGE))
        assert sorted(p.index for p in ranked) == list(range(len(LARGE)))
        scores = [p.score for p in ranked]
        assert scores == sorted(scores, reverse=True)
        assert all(0.0 <= score <= 1.0 for score in scores)

    async def test_more_passages_than_one_call_holds(self, reranker: Reranker) -> None:
        ranked = await reranker.rerank(QUERY, LARGE, 2)
        assert [p.index for p in ranked] == [LARGE_ANSWER, LARGE_RELATED]

    @pytest.mark.parametrize("top_n", [5, 0])
    async def test_no_passages_give_nothing(self, reranker: Reranker, top_n: int) -> None:
        assert await reranker.rerank(QUERY, [], top_n) == []

    @pytest.mark.parametrize("top_n", [0, -3])
    async def test_top_n_below_one_is_invalid(self, reranker: Reranker, top_n: int) -> None:
        with pytest.raises(InvalidRequestError):
            await reranker.rerank(QUERY, PASSAGES, top_n)

    async def test_a_blank_query_is_invalid(self, reranker: Reranker) -> None:
        with pytest.raises(InvalidRequestError):
            await reranker.rerank("  ", PASSAGES, 2)

    def test_model_is_named(self, reranker: Reranker) -> None:
        assert reranker.model
