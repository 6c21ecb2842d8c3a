"""The stage runner and the dense stages, over the in-memory doubles."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import numpy as np
import pytest
from structlog.testing import capture_logs

from retrieval.adapters.extraction.rule_based_entities import RuleBasedEntityExtractor
from retrieval.domain.keywords import KeywordRecord
from retrieval.domain.models import DENSE, RetrievalQuery, SearchMode
from retrieval.domain.ranking.fusion import FusionMethod
from retrieval.domain.stage_names import StageName
from retrieval.domain.vectors import VectorRecord
from retrieval.errors import BackendUnavailableError, InvalidFilterError, NamespaceNotFoundError
from retrieval.service.retrieval.pipeline import (
    Candidate,
    Pipeline,
    PipelineState,
    SearchPlan,
    Stage,
)
from retrieval.service.retrieval.pipeline.dense_scores import CompleteDenseScores
from retrieval.service.retrieval.pipeline.diversify import Diversify
from retrieval.service.retrieval.pipeline.fuse import Fuse
from retrieval.service.retrieval.pipeline.graph_search import GraphSearch
from retrieval.service.retrieval.pipeline.near_names import NearNames
from retrieval.service.retrieval.pipeline.search import Search
from retrieval.service.retrieval.pipeline.threshold import ScoreThreshold
from retrieval.service.timing import StageClock
from retrieval_testkit import (
    HashEmbedder,
    InMemoryChunkRepository,
    InMemoryKeywordIndex,
    InMemoryVectorIndex,
)
from retrieval_testkit.in_memory_graph_store import InMemoryGraphStore
from retrieval_testkit.telemetry import quiet_telemetry

NS = "pipeline"


def state(plan: SearchPlan | None = None, **fields: object) -> PipelineState:
    start = PipelineState.start(RetrievalQuery(query="tea"), NS, plan or SearchPlan())
    return replace(start, **fields)


def test_an_updated_state_is_the_one_replace_makes_and_leaves_the_old_as_it_was() -> None:
    before = state(candidates=candidates(0.9), counts={"search": 1})
    changes = {"candidates": candidates(0.5, 0.4), "text": "green tea", "degraded": ("keyword",)}
    after = before.updated(**changes)
    assert after == replace(before, **changes)
    assert after.query_vector is before.query_vector
    assert after.chunks is before.chunks
    assert before.candidates == candidates(0.9)
    assert before.text == "tea"
    with pytest.raises(TypeError, match="no field candidate, txt"):
        before.updated(candidate=(), txt="x")


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
    after = await Pipeline([Identity()], quiet_telemetry()).run(before, StageClock())
    assert replace(after, counts={}) == before
    assert after.counts == {"identity": 2}


async def test_stages_run_in_the_order_given() -> None:
    after = await Pipeline([Append("b"), Append("a"), Append("c")], quiet_telemetry()).run(
        state(), StageClock()
    )
    assert [c.chunk_id for c in after.candidates] == ["b", "a", "c"]
    assert after.counts == {"b": 1, "a": 2, "c": 3}


async def test_each_stage_is_timed_under_its_name() -> None:
    stages: list[Stage] = [Append("first"), Identity(), Append("last")]
    clock = StageClock()
    await Pipeline(stages, quiet_telemetry()).run(state(), clock)
    assert list(clock.stages) == ["first", "identity", "last"]


async def test_no_stages_is_the_identity() -> None:
    before = state(candidates=candidates(0.3))
    clock = StageClock()
    assert await Pipeline([], quiet_telemetry()).run(before, clock) == before
    assert clock.stages == {}


def test_two_stages_of_one_name_are_refused() -> None:
    with pytest.raises(ValueError, match="distinct"):
        Pipeline([Append("x"), Append("x")], quiet_telemetry())


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
        await Pipeline([Broken(), Later()], quiet_telemetry()).run(state(), StageClock())
    assert not Later.ran


@pytest.mark.parametrize(
    ("threshold", "kept"),
    [(0.0, ["c0", "c1", "c2"]), (0.4, ["c0", "c1"]), (0.5, ["c0"]), (0.95, [])],
)
async def test_threshold_keeps_cosines_at_or_above_it(threshold: float, kept: list[str]) -> None:
    query = RetrievalQuery(query="tea", confidence_threshold=threshold)
    after = await ScoreThreshold().run(state(query=query, candidates=candidates(0.9, 0.4, 0.1)))
    assert [c.chunk_id for c in after.candidates] == kept


async def test_threshold_reads_the_cosine_whatever_the_ranking_score() -> None:
    fused = (
        Candidate("strong-fused-weak-cosine", 0.99, {"dense": 0.2, "fused": 0.99}),
        Candidate("weak-fused-strong-cosine", 0.01, {"dense": 0.9, "fused": 0.01}),
        Candidate("keyword-only", 0.5, {"keyword": 7.0, "fused": 0.5}),
    )
    query = RetrievalQuery(query="tea", confidence_threshold=0.8)
    after = await ScoreThreshold().run(state(query=query, candidates=fused))
    assert [c.chunk_id for c in after.candidates] == ["weak-fused-strong-cosine"]
    everything = await ScoreThreshold().run(state(candidates=fused))
    assert everything.candidates == fused


class Keywords(InMemoryKeywordIndex):
    """Keyword index whose queries can be made to fail or to wait for the dense search."""

    def __init__(self, error: Exception | None = None) -> None:
        super().__init__()
        self.error = error
        self.started = asyncio.Event()

    async def query(self, text: str, **kwargs: object) -> list:
        self.started.set()
        if self.error is not None:
            raise self.error
        return await super().query(text, **kwargs)


class Vectors(InMemoryVectorIndex):
    def __init__(self, error: Exception | None = None, wait_for: Keywords | None = None) -> None:
        super().__init__()
        self.error = error
        self.wait_for = wait_for
        self.fetched: list[list[str]] = []

    async def query(self, vector, **kwargs):  # type: ignore[no-untyped-def]
        if self.wait_for is not None:
            await asyncio.wait_for(self.wait_for.started.wait(), timeout=5)
        if self.error is not None:
            raise self.error
        return await super().query(vector, **kwargs)

    async def fetch(self, ids, namespace):  # type: ignore[no-untyped-def]
        self.fetched.append(list(ids))
        return await super().fetch(ids, namespace)


async def seeded(index: InMemoryVectorIndex, keywords: InMemoryKeywordIndex) -> None:
    """Three chunks of two documents; the keyword side knows "tea" in a and c only."""
    vectors = {"a#0": (1.0, 0.0), "a#1": (0.9, 0.1), "b#0": (0.0, 1.0), "c#0": (0.6, 0.8)}
    texts = {"a#0": "tea leaves", "a#1": "green tea", "b#0": "monsoon rain", "c#0": "tea tea tea"}
    metadata = {"domain": "plant_diseases"}
    await index.upsert(
        [VectorRecord(id=i, values=v, metadata=metadata) for i, v in vectors.items()], NS
    )
    await keywords.upsert(
        [KeywordRecord(id=i, text=t, metadata=metadata) for i, t in texts.items()], NS
    )


def searching(index: InMemoryVectorIndex, keywords: InMemoryKeywordIndex) -> Search:
    near = NearNames(keywords, InMemoryChunkRepository())
    graph = GraphSearch(InMemoryGraphStore(), RuleBasedEntityExtractor(), near)
    return Search(FixedEmbedder((1.0, 0.0)), index, keywords, graph)


class FixedEmbedder(HashEmbedder):
    def __init__(self, vector: tuple[float, ...]) -> None:
        super().__init__(dimension=len(vector))
        self.vector = np.asarray(vector, dtype=np.float32)

    async def embed_query(self, text: str) -> np.ndarray:
        self.queries.append(text)
        return self.vector


async def test_dense_and_keyword_searches_run_at_once() -> None:
    keywords = Keywords()
    index = Vectors(wait_for=keywords)
    await seeded(index, keywords)
    after = await searching(index, keywords).run(state())
    assert set(after.sources) == {"dense", "keyword"}
    assert [match.id for match in after.sources["dense"]][:2] == ["a#0", "a#1"]
    assert {match.id for match in after.sources["keyword"]} == {"a#0", "a#1", "c#0"}
    assert after.degraded == ()
    assert {"embed", "dense", "keyword"} <= set(after.timings)


async def test_a_failing_keyword_search_leaves_the_dense_answer_and_a_flag() -> None:
    keywords = Keywords(error=BackendUnavailableError("keyword index down"))
    index = Vectors()
    await seeded(index, keywords)
    with capture_logs() as logs:
        after = await searching(index, keywords).run(state())
    assert after.degraded == ("keyword",)
    assert set(after.sources) == {"dense"}
    assert any(e["event"] == "retrieve.source_failed" and e["source"] == "keyword" for e in logs)


async def test_a_failing_dense_search_leaves_the_keyword_answer() -> None:
    keywords = Keywords()
    index = Vectors(error=BackendUnavailableError("index down"))
    await seeded(index, keywords)
    after = await searching(index, keywords).run(state())
    assert after.degraded == ("dense",)
    assert set(after.sources) == {"keyword"}


async def test_when_every_search_fails_the_error_is_raised() -> None:
    keywords = Keywords(error=BackendUnavailableError("keyword index down"))
    index = Vectors(error=BackendUnavailableError("index down"))
    with pytest.raises(BackendUnavailableError):
        await searching(index, keywords).run(state())


@pytest.mark.parametrize(
    "error", [InvalidFilterError("bad filter"), NamespaceNotFoundError("no such namespace")]
)
async def test_a_caller_error_is_never_degraded_to_a_partial_answer(error: Exception) -> None:
    keywords = Keywords(error=error)
    index = Vectors()
    await seeded(index, keywords)
    with pytest.raises(type(error)):
        await searching(index, keywords).run(state())


@pytest.mark.parametrize(
    ("plan", "top_k", "depth"),
    [
        (SearchPlan(mode=SearchMode.DENSE), 3, 3),
        (SearchPlan(mode=SearchMode.DENSE, max_per_document=1), 3, 100),
        (SearchPlan(mode=SearchMode.DENSE, mmr_lambda=0.5), 3, 100),
        (SearchPlan(mode=SearchMode.KEYWORD), 3, 3),
        (SearchPlan(), 3, 100),
        (SearchPlan(fetch_k=2), 5, 5),
    ],
)
def test_each_search_returns_top_k_unless_a_later_stage_reorders(
    plan: SearchPlan, top_k: int, depth: int
) -> None:
    assert plan.depth(top_k) == depth


def sources(**lists: list[tuple[str, float]]) -> dict[str, tuple[tuple[str, float], ...]]:
    return {source: tuple(ranked) for source, ranked in lists.items()}


async def test_fusion_joins_a_chunk_both_searches_found_into_one_candidate() -> None:
    found = sources(dense=[("a", 0.9), ("b", 0.5)], keyword=[("b", 12.0), ("c", 3.0)])
    after = await Fuse().run(state(plan=SearchPlan(fusion=FusionMethod.RRF), sources=found))
    by_id = {c.chunk_id: c for c in after.candidates}
    assert [c.chunk_id for c in after.candidates] == ["b", "a", "c"]
    assert by_id["b"].scores == {
        "dense": 0.5,
        "keyword": 12.0,
        "fused": pytest.approx(1 / 62 + 1 / 61),
    }
    assert by_id["b"].score == by_id["b"].scores["fused"]


async def test_fusion_counts_a_chunk_found_twice_by_one_search_once() -> None:
    once = sources(dense=[("a", 0.9), ("b", 0.5)], keyword=[("b", 12.0)])
    twice = sources(dense=[("a", 0.9), ("b", 0.5), ("b", 0.4)], keyword=[("b", 12.0), ("b", 1.0)])
    plan = SearchPlan(fusion=FusionMethod.RRF)
    assert (await Fuse().run(state(plan=plan, sources=once))).candidates == (
        await Fuse().run(state(plan=plan, sources=twice))
    ).candidates


async def test_a_single_search_keeps_its_own_scores() -> None:
    found = sources(dense=[("a", 0.9), ("b", 0.5)])
    after = await Fuse().run(state(plan=SearchPlan(mode=SearchMode.DENSE), sources=found))
    assert after.candidates == (
        Candidate("a", 0.9, {"dense": 0.9}),
        Candidate("b", 0.5, {"dense": 0.5}),
    )


async def test_fusion_weights_move_the_ranking() -> None:
    found = sources(dense=[("a", 0.9), ("b", 0.1)], keyword=[("b", 9.0), ("a", 1.0)])
    leaning = {
        "dense": SearchPlan(dense_weight=1.0, keyword_weight=0.2),
        "keyword": SearchPlan(dense_weight=0.2, keyword_weight=1.0),
    }
    firsts = {
        side: (await Fuse().run(state(plan=plan, sources=found))).candidates[0].chunk_id
        for side, plan in leaning.items()
    }
    assert firsts == {"dense": "a", "keyword": "b"}


async def test_keyword_only_finds_get_their_cosine_when_a_threshold_needs_it() -> None:
    index = Vectors()
    await seeded(index, InMemoryKeywordIndex())
    query = RetrievalQuery(query="tea", confidence_threshold=0.5)
    found = (Candidate("c#0", 0.4, {"keyword": 3.0, "fused": 0.4}),)
    before = state(query=query, candidates=found, query_vector=np.array([1.0, 0.0], np.float32))
    after = await CompleteDenseScores(FixedEmbedder((1.0, 0.0)), index).run(before)
    assert after.candidates[0].scores["dense"] == pytest.approx(0.6)
    assert index.fetched == [["c#0"]]


async def test_completing_dense_scores_is_timed_under_its_own_stage_name() -> None:
    clock = StageClock()
    stage = CompleteDenseScores(FixedEmbedder((1.0, 0.0)), Vectors())
    await Pipeline([stage], quiet_telemetry()).run(state(), clock)
    assert list(clock.stages) == [StageName.DENSE_SCORES] == ["dense_scores"]


def test_stage_names_are_the_strings_results_logs_and_metrics_carry() -> None:
    assert list(StageName) == [
        "query",
        "embed",
        "search",
        "fuse",
        "second_hop",
        "dense_scores",
        "threshold",
        "rewrite",
        "rerank",
        "compress",
        "llm_filter",
        "diversify",
        "fetch",
        "widen",
        "cache",
    ]


async def test_without_threshold_or_mmr_only_the_returned_candidates_get_their_cosine() -> None:
    index = Vectors()
    await seeded(index, InMemoryKeywordIndex())
    found = (
        Candidate("a#0", 0.9, {"dense": 1.0, "fused": 0.9}),
        Candidate("c#0", 0.4, {"keyword": 3.0, "fused": 0.4}),
        Candidate("b#0", 0.2, {"keyword": 1.0, "fused": 0.2}),
    )
    before = state(
        query=RetrievalQuery(query="tea", top_k=2),
        candidates=found,
        query_vector=np.array([1.0, 0.0], np.float32),
    )
    after = await CompleteDenseScores(FixedEmbedder((1.0, 0.0)), index).run(before)
    assert index.fetched == [["c#0"]]
    assert [DENSE in c.scores for c in after.candidates] == [True, True, False]


async def test_keyword_mode_embeds_nothing_when_nothing_needs_a_cosine() -> None:
    index = Vectors()
    embedder = FixedEmbedder((1.0, 0.0))
    found = (Candidate("c#0", 3.0, {"keyword": 3.0}),)
    plan = SearchPlan(mode=SearchMode.KEYWORD)
    after = await CompleteDenseScores(embedder, index).run(state(plan=plan, candidates=found))
    assert after.candidates == found
    assert index.fetched == []
    assert embedder.queries == []


def ranked(*ids: str) -> tuple[Candidate, ...]:
    return tuple(Candidate(i, 1.0 - n / 10, {"fused": 1.0 - n / 10}) for n, i in enumerate(ids))


async def test_diversify_with_lambda_one_and_no_cap_is_the_ranking_cut_to_top_k() -> None:
    query = RetrievalQuery(query="tea", top_k=2)
    after = await Diversify().run(state(query=query, candidates=ranked("a#0", "a#1", "b#0")))
    assert [c.chunk_id for c in after.candidates] == ["a#0", "a#1"]


async def test_diversify_caps_the_chunks_of_one_document() -> None:
    query = RetrievalQuery(query="tea", top_k=3)
    plan = SearchPlan(max_per_document=1)
    candidates = ranked("a#0", "a#1", "b#0", "a#2", "c#0")
    after = await Diversify().run(state(plan=plan, query=query, candidates=candidates))
    assert [c.chunk_id for c in after.candidates] == ["a#0", "b#0", "c#0"]


async def test_mmr_passes_over_a_near_copy_of_what_it_already_picked() -> None:
    query = RetrievalQuery(query="tea", top_k=2)
    vectors = {
        "a#0": np.array([1.0, 0.0], np.float32),
        "a#1": np.array([1.0, 0.01], np.float32),
        "b#0": np.array([0.0, 1.0], np.float32),
    }
    before = state(
        plan=SearchPlan(mmr_lambda=0.5),
        query=query,
        candidates=ranked("a#0", "a#1", "b#0"),
        vectors=vectors,
        query_vector=np.array([1.0, 0.0], np.float32),
    )
    after = await Diversify().run(before)
    assert [c.chunk_id for c in after.candidates] == ["a#0", "b#0"]


async def test_a_failed_dense_search_is_not_retried_to_complete_the_scores() -> None:
    index = Vectors(error=BackendUnavailableError("index down"))
    found = (Candidate("c#0", 3.0, {"keyword": 3.0}),)
    query = RetrievalQuery(query="tea", confidence_threshold=0.5)
    before = state(query=query, candidates=found, degraded=("dense",))
    after = await CompleteDenseScores(FixedEmbedder((1.0, 0.0)), index).run(before)
    assert after == before
    assert index.fetched == []
