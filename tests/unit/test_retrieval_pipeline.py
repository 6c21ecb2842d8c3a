"""The stage runner and the dense stages, over the in-memory doubles."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from retrieval.domain.models import RetrievalQuery
from retrieval.domain.vectors import VectorRecord
from retrieval.service.pipeline import (
    Candidate,
    DenseSearch,
    Pipeline,
    PipelineState,
    ScoreThreshold,
    Stage,
)
from retrieval.service.timing import StageClock
from retrieval_testkit import InMemoryVectorIndex

NS = "pipeline"


def state(**fields: object) -> PipelineState:
    return replace(PipelineState.start(RetrievalQuery(query="tea"), NS), **fields)


def candidates(*scores: float) -> tuple[Candidate, ...]:
    return tuple(
        Candidate(chunk_id=f"c{i}", score=score, scores={"dense": score})
        for i, score in enumerate(scores)
    )


class Identity:
    name = "identity"

    async def run(self, state: PipelineState) -> PipelineState:
        return state


class Append:
    """Adds one candidate named after the stage, so the order of stages shows in the result."""

    def __init__(self, name: str) -> None:
        self.name = name

    async def run(self, state: PipelineState) -> PipelineState:
        added = Candidate(chunk_id=self.name, score=0.5, scores={"dense": 0.5})
        return replace(state, candidates=(*state.candidates, added))


async def test_an_identity_stage_changes_nothing_but_its_record() -> None:
    before = state(
        query_vector=np.array([0.1, 0.2], dtype=np.float32), candidates=candidates(0.9, 0.4)
    )
    after = await Pipeline([Identity()]).run(before, StageClock())
    assert replace(after, counts={}) == before
    assert after.counts == {"identity": 2}


async def test_stages_run_in_the_order_given() -> None:
    after = await Pipeline([Append("b"), Append("a"), Append("c")]).run(state(), StageClock())
    assert [c.chunk_id for c in after.candidates] == ["b", "a", "c"]
    assert after.counts == {"b": 1, "a": 2, "c": 3}


async def test_each_stage_is_timed_under_its_name() -> None:
    stages: list[Stage] = [Append("first"), Identity(), Append("last")]
    clock = StageClock()
    await Pipeline(stages).run(state(), clock)
    assert list(clock.stages) == ["first", "identity", "last"]


async def test_no_stages_is_the_identity() -> None:
    before = state(candidates=candidates(0.3))
    clock = StageClock()
    assert await Pipeline([]).run(before, clock) == before
    assert clock.stages == {}


def test_two_stages_of_one_name_are_refused() -> None:
    with pytest.raises(ValueError, match="distinct"):
        Pipeline([Append("x"), Append("x")])


async def test_a_failing_stage_ends_the_run_with_its_error() -> None:
    class Broken:
        name = "broken"

        async def run(self, state: PipelineState) -> PipelineState:
            raise RuntimeError("store down")

    class Later:
        name = "later"
        ran = False

        async def run(self, state: PipelineState) -> PipelineState:
            Later.ran = True
            return state

    with pytest.raises(RuntimeError, match="store down"):
        await Pipeline([Broken(), Later()]).run(state(), StageClock())
    assert not Later.ran


@pytest.mark.parametrize(
    ("threshold", "kept"),
    [(0.0, ["c0", "c1", "c2"]), (0.4, ["c0", "c1"]), (0.5, ["c0"]), (0.95, [])],
)
async def test_threshold_keeps_scores_at_or_above_it(threshold: float, kept: list[str]) -> None:
    query = RetrievalQuery(query="tea", confidence_threshold=threshold)
    after = await ScoreThreshold().run(state(query=query, candidates=candidates(0.9, 0.4, 0.1)))
    assert [c.chunk_id for c in after.candidates] == kept


async def test_dense_search_scores_each_candidate_by_its_cosine() -> None:
    index = InMemoryVectorIndex()
    await index.upsert(
        [
            VectorRecord(id="near", values=(1.0, 0.0), metadata={"domain": "plant_diseases"}),
            VectorRecord(id="far", values=(0.0, 1.0), metadata={"domain": "plant_diseases"}),
        ],
        namespace=NS,
    )
    after = await DenseSearch(index).run(state(query_vector=np.array([1.0, 0.0], np.float32)))
    assert [(c.chunk_id, c.scores) for c in after.candidates] == [
        ("near", {"dense": pytest.approx(1.0)}),
        ("far", {"dense": pytest.approx(0.0)}),
    ]
    assert all(c.score == c.scores["dense"] for c in after.candidates)


async def test_dense_search_before_embedding_is_refused() -> None:
    with pytest.raises(ValueError, match="EmbedQuery"):
        await DenseSearch(InMemoryVectorIndex()).run(state())
