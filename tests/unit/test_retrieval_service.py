"""RetrievalService over the in-memory doubles: outcomes, not calls."""

from __future__ import annotations

import re

import numpy as np
import pytest
import structlog
from structlog.testing import capture_logs

from retrieval.container import Container
from retrieval.domain.models import (
    DEFAULT_DOMAINS,
    RagDocument,
    RetrievalOptions,
    RetrievalQuery,
    SearchMode,
    validated,
)
from retrieval.domain.query_text import QUERY_WINDOW_CHARS
from retrieval.domain.stage_names import StageName
from retrieval.errors import (
    BackendNotConfiguredError,
    BackendUnavailableError,
    InvalidFilterError,
    InvalidRequestError,
    NamespaceNotFoundError,
)
from retrieval.service.retrieval.pipeline import SearchPlan
from retrieval.service.retrieval.pipeline.rewrite import LlmRewriter
from retrieval.service.retrieval.retrieval_service import RetrievalService, check_domains
from retrieval.settings import Settings
from retrieval_testkit import (
    ChatRequest,
    HashEmbedder,
    InMemoryChunkRepository,
    InMemoryKeywordIndex,
    InMemoryVectorIndex,
    ScriptedLlm,
    WordOverlapReranker,
)
from retrieval_testkit.container import in_memory_container
from retrieval_testkit.scripted_llm import Reply

NS = "unit"

DOCUMENTS = [
    RagDocument(
        document_id="blister-blight",
        title="Blister blight",
        domain="plant_diseases",
        content="Blister blight fungus attacks young tea leaves in wet monsoon weather.",
    ),
    RagDocument(
        document_id="monsoon",
        title="Monsoon",
        domain="weather_patterns",
        content="The monsoon brings heavy rain and wet weather to tea estates.",
    ),
    RagDocument(
        document_id="pruning",
        title="Pruning",
        domain="tea_cultivation",
        content="Tea bushes are pruned every four years to keep a plucking table.",
    ),
]


def settings(**changes: object) -> Settings:
    """The service's settings with nothing cached, so that each call reaches the stores."""
    unchanged = {
        "allowed_domains": DEFAULT_DOMAINS,
        "default_namespace": NS,
        "result_cache_entries": 0,
        "query_vector_cache_entries": 0,
        "chunk_cache_entries": 0,
    }
    return Settings(_env_file=None, **(unchanged | changes))


class Stores:
    """The in-memory model and stores the services of one test share, wired by the test kit's
    container with a scripted language model."""

    def __init__(self, configured: Settings | None = None) -> None:
        self.embedder = HashEmbedder()
        self.index = InMemoryVectorIndex()
        self.keywords = InMemoryKeywordIndex()
        self.chunks = InMemoryChunkRepository()
        container = self.container(configured or settings())
        self.retrieval = container.retrieval_service()
        self.ingestion = container.ingestion_service()
        self.library = container.library()

    def container(
        self, configured: Settings, plan: SearchPlan = SearchPlan(), **replacements: object
    ) -> Container:
        """``replacements`` override providers by name."""
        doubles = {
            "model_embedder": self.embedder,
            "vector_index": self.index,
            "keyword_index": self.keywords,
            "chunk_repository": self.chunks,
            "llm": ScriptedLlm(),
            "search_plan": plan,
        }
        return in_memory_container(configured, **(doubles | replacements))

    def service(
        self, plan: SearchPlan = SearchPlan(), allowed_domains=DEFAULT_DOMAINS, **replacements
    ) -> RetrievalService:
        """Another retrieval service over the same stores."""
        configured = settings(allowed_domains=allowed_domains)
        return self.container(configured, plan, **replacements).retrieval_service()


@pytest.fixture
async def stores() -> Stores:
    stores = Stores()
    await stores.ingestion.ingest(DOCUMENTS, NS)
    return stores


async def test_returns_chunk_texts_best_first(stores: Stores) -> None:
    result = await stores.retrieval.retrieve("blister blight fungus on tea leaves", top_k=3)
    assert result.matches[0].document_id == "blister-blight"
    assert result.matches[0].content.endswith(DOCUMENTS[0].content)
    assert result.matches[0].title == "Blister blight"
    scores = [m.score for m in result.matches]
    assert scores == sorted(scores, reverse=True)
    assert result.total_matches == len(result.matches) == 3
    assert result.namespace == NS


async def test_a_query_model_gives_what_the_keyword_form_gives(stores: Stores) -> None:
    asked = RetrievalQuery(query="wet monsoon weather", domains=("weather_patterns",), top_k=2)
    by_model = await stores.retrieval.retrieve_query(asked)
    by_keywords = await stores.retrieval.retrieve(
        "wet monsoon weather", ["weather_patterns"], top_k=2, namespace=NS
    )
    assert by_model.namespace == NS
    assert by_model.model_dump(exclude={"timings"}) == by_keywords.model_dump(exclude={"timings"})
    assert [m.document_id for m in by_model.matches] == ["monsoon"]


async def test_the_query_is_normalised_before_it_is_embedded(stores: Stores) -> None:
    messy = await stores.retrieval.retrieve("  blister\x00\tblight \u200b\n fungus ", top_k=3)
    clean = await stores.retrieval.retrieve("blister blight fungus", top_k=3)
    assert messy.model_dump(exclude={"timings", "query"}) == clean.model_dump(
        exclude={"timings", "query"}
    )
    assert stores.embedder.queries == ["blister blight fungus", "blister blight fungus"]
    assert messy.query == "  blister\x00\tblight \u200b\n fungus "


async def test_a_query_of_control_characters_is_blank(stores: Stores) -> None:
    result = await stores.retrieval.retrieve("\x00\x1b\u200b \t", top_k=3)
    assert result.matches == ()
    assert stores.embedder.queries == []


DENSE_ONLY = RetrievalOptions(mode=SearchMode.DENSE)


async def test_dense_only_ranks_by_cosine_and_reports_only_it(stores: Stores) -> None:
    result = await stores.retrieval.retrieve(
        "blister blight fungus on tea leaves", top_k=3, options=DENSE_ONLY
    )
    assert result.matches
    assert all(m.scores == {"dense": m.score} for m in result.matches)
    assert stores.keywords.queries == []


async def test_hybrid_matches_carry_the_fused_score_and_each_source(stores: Stores) -> None:
    result = await stores.retrieval.retrieve("blister blight fungus on tea leaves", top_k=3)
    best = result.matches[0]
    assert best.document_id == "blister-blight"
    assert best.scores["fused"] == best.score
    assert best.scores["keyword"] > 0
    assert -1 <= best.scores["dense"] <= 1
    assert stores.keywords.queries == ["blister blight fungus on tea leaves"]


async def test_query_is_embedded_as_a_query(stores: Stores) -> None:
    await stores.retrieval.retrieve("wet weather")
    assert stores.embedder.queries == ["wet weather"]
    assert "wet weather" not in stores.embedder.passages


async def test_domain_filter_keeps_only_those_domains(stores: Stores) -> None:
    result = await stores.retrieval.retrieve("wet monsoon weather", domains=["weather_patterns"])
    assert [m.document_id for m in result.matches] == ["monsoon"]


async def test_several_domains_keep_score_order_across_them(stores: Stores) -> None:
    result = await stores.retrieval.retrieve(
        "wet monsoon weather", domains=["weather_patterns", "plant_diseases"], top_k=5
    )
    assert {m.domain for m in result.matches} == {"weather_patterns", "plant_diseases"}
    scores = [m.score for m in result.matches]
    assert scores == sorted(scores, reverse=True)


async def test_threshold_drops_weak_matches_after_the_search(stores: Stores) -> None:
    everything = await stores.retrieval.retrieve(
        "blister blight fungus", top_k=3, options=DENSE_ONLY
    )
    cut = (everything.matches[0].score + everything.matches[1].score) / 2
    kept = await stores.retrieval.retrieve(
        "blister blight fungus", top_k=3, confidence_threshold=cut, options=DENSE_ONLY
    )
    assert [m.chunk_id for m in kept.matches] == [everything.matches[0].chunk_id]


async def test_hybrid_threshold_applies_to_the_cosine_not_the_fused_score(stores: Stores) -> None:
    everything = await stores.retrieval.retrieve("blister blight fungus", top_k=3)
    cosines = sorted((m.scores["dense"] for m in everything.matches), reverse=True)
    cut = (cosines[0] + cosines[1]) / 2
    kept = await stores.retrieval.retrieve(
        "blister blight fungus", top_k=3, confidence_threshold=cut
    )
    assert [m.chunk_id for m in kept.matches] == [
        m.chunk_id for m in everything.matches if m.scores["dense"] >= cut
    ]
    assert len(kept.matches) == 1


async def test_texts_are_fetched_in_one_call(stores: Stores) -> None:
    await stores.retrieval.retrieve("tea", top_k=3)
    assert stores.chunks.get_many_calls == 1


async def test_timings_cover_every_stage(stores: Stores) -> None:
    timings = (await stores.retrieval.retrieve("tea")).timings
    assert timings.embed_ms > 0
    assert timings.search_ms > 0
    assert timings.fetch_ms > 0
    assert timings.total_ms >= timings.search_ms + timings.fetch_ms
    assert timings.search_ms >= max(timings.stages["dense"], timings.stages["keyword"])
    assert set(timings.stages) == {*StageName, "dense", "keyword"} - {StageName.CACHE}
    assert timings.stages[StageName.EMBED] == timings.embed_ms


@pytest.mark.parametrize("blank", ["", "   ", "\n\t"])
async def test_blank_query_returns_empty_at_once(stores: Stores, blank: str) -> None:
    result = await stores.retrieval.retrieve(blank)
    assert result.matches == ()
    assert stores.embedder.queries == []


async def test_missing_chunk_text_is_skipped_with_a_warning(stores: Stores) -> None:
    before = await stores.retrieval.retrieve("blister blight fungus", top_k=3)
    best = before.matches[0]
    await stores.chunks.delete_chunks([best.chunk_id], NS)
    with capture_logs() as logs:
        result = await stores.retrieval.retrieve("blister blight fungus", top_k=3)
    assert [m.chunk_id for m in result.matches] == [m.chunk_id for m in before.matches[1:]]
    assert any(e["event"] == "retrieve.chunk_missing" and e["log_level"] == "warning" for e in logs)


async def test_missing_namespace_is_a_typed_error(stores: Stores) -> None:
    with pytest.raises(NamespaceNotFoundError):
        await stores.retrieval.retrieve("tea", namespace="nobody-wrote-here")


class UnconfiguredEmbedder(HashEmbedder):
    async def embed_query(self, text: str) -> np.ndarray:
        raise BackendNotConfiguredError("no API key")


async def test_unconfigured_backend_gives_empty_result_and_warning() -> None:
    stores = Stores()
    service = stores.service(
        SearchPlan(mode=SearchMode.DENSE), model_embedder=UnconfiguredEmbedder()
    )
    with capture_logs() as logs:
        result = await service.retrieve("tea")
    assert result.matches == ()
    assert any(e["event"] == "retrieve.backend_not_configured" for e in logs)


async def test_log_line_carries_stage_durations_and_counts(stores: Stores) -> None:
    with capture_logs(processors=[structlog.contextvars.merge_contextvars]) as logs:
        result = await stores.retrieval.retrieve("tea", top_k=2, confidence_threshold=0.0)
    done = next(e for e in logs if e["event"] == "retrieve.done")
    assert done["candidates"] == {
        StageName.QUERY: 0,
        "dense": 3,
        "keyword": 3,
        StageName.SEARCH: 3,
        StageName.FUSE: 3,
        StageName.SECOND_HOP: 3,
        "second_hop_names": 0,
        "second_hop_links": 0,
        StageName.DENSE_SCORES: 3,
        StageName.THRESHOLD: 2,
        StageName.REWRITE: 2,
        StageName.RERANK: 2,
        StageName.COMPRESS: 2,
        StageName.LLM_FILTER: 2,
        StageName.DIVERSIFY: 2,
        StageName.FETCH: 2,
        StageName.WIDEN: 2,
    }
    assert done["returned"] == result.total_matches == 2
    stage_keys = {"embed_ms", "dense_ms", "keyword_ms", "search_ms", "fetch_ms", "total_ms"}
    assert stage_keys | {"correlation_id"} <= done.keys()


async def test_an_outer_correlation_id_is_kept(stores: Stores) -> None:
    with (
        structlog.contextvars.bound_contextvars(correlation_id="from-caller"),
        capture_logs(processors=[structlog.contextvars.merge_contextvars]) as logs,
    ):
        await stores.retrieval.retrieve("tea")
    assert next(e for e in logs if e["event"] == "retrieve.done")["correlation_id"] == "from-caller"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"top_k": 0}, "top_k"),
        ({"top_k": 101}, "top_k"),
        ({"confidence_threshold": -0.1}, "confidence_threshold"),
        ({"confidence_threshold": 1.5}, "confidence_threshold"),
        ({"domains": ["coffee"]}, "domains"),
        ({"domains": ["Plant Diseases"]}, "domains.0"),
        ({"namespace": "../etc"}, "namespace"),
        ({"namespace": "a b"}, "namespace"),
        ({"query": "x" * 40_000}, "query"),
    ],
)
async def test_bad_input_is_a_typed_error_naming_the_field(
    stores: Stores, kwargs: dict, field: str
) -> None:
    arguments = {"query": "tea"} | kwargs
    with pytest.raises(InvalidRequestError) as raised:
        await stores.retrieval.retrieve(**arguments)
    assert raised.value.field == field


async def test_allowed_domains_come_from_configuration() -> None:
    stores = Stores()
    service = stores.service(allowed_domains=["coffee"])
    with pytest.raises(InvalidRequestError):
        await service.retrieve("tea", domains=["plant_diseases"])
    with pytest.raises(NamespaceNotFoundError):
        await service.retrieve("tea", domains=["coffee"])


def test_invalid_filter_is_an_invalid_request() -> None:
    assert issubclass(InvalidFilterError, InvalidRequestError)


async def test_a_query_over_the_window_is_cut_and_the_result_says_so(stores: Stores) -> None:
    words = ["blister", "blight"] + ["tea"] * 400
    service = stores.service(plan=SearchPlan(query_max_words=50))
    result = await service.retrieve(" ".join(words))
    assert result.query_truncated
    assert stores.embedder.queries == [" ".join(words[:50])]
    assert stores.keywords.queries == [" ".join(words[:50])]
    short = await service.retrieve("blister blight")
    assert not short.query_truncated


@pytest.mark.parametrize(
    "query",
    [pytest.param("茶" * 2_048, id="cjk-without-spaces"), pytest.param("x" * 16_000, id="word")],
)
async def test_a_query_of_few_long_words_is_cut_at_the_character_bound(
    stores: Stores, query: str
) -> None:
    result = await stores.service().retrieve(query)
    assert result.query_truncated
    assert stores.embedder.queries == [query[:QUERY_WINDOW_CHARS]]
    assert result.query_used == query[:QUERY_WINDOW_CHARS]


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"fetch_k": 0}, "options.fetch_k"),
        ({"mode": "semantic"}, "options.mode"),
        ({"fusion": "sum"}, "options.fusion"),
        ({"mmr_lambda": 1.5}, "options.mmr_lambda"),
        ({"keyword_weight": -1}, "options.keyword_weight"),
        ({"max_per_document": -1}, "options.max_per_document"),
    ],
)
def test_bad_options_name_their_field(options: dict, field: str) -> None:
    with pytest.raises(InvalidRequestError) as raised:
        validated(RetrievalQuery, query="tea", options=options)
    assert raised.value.field == field


async def test_each_source_score_stays_with_its_chunk_after_fusion(stores: Stores) -> None:
    question = "wet monsoon weather on tea leaves"
    hybrid = await stores.retrieval.retrieve(question, top_k=3)
    dense = await stores.retrieval.retrieve(question, top_k=3, options=DENSE_ONLY)
    keyword = await stores.retrieval.retrieve(
        question, top_k=3, options=RetrievalOptions(mode=SearchMode.KEYWORD)
    )
    cosine = {m.chunk_id: m.score for m in dense.matches}
    bm25 = {m.chunk_id: m.score for m in keyword.matches}
    assert len(hybrid.matches) == 3
    for match in hybrid.matches:
        assert match.scores["dense"] == pytest.approx(cosine[match.chunk_id])
        if "keyword" in match.scores:
            assert match.scores["keyword"] == pytest.approx(bm25[match.chunk_id])


async def test_a_keyword_threshold_reads_the_cosine_not_bm25(stores: Stores) -> None:
    question = "blister blight fungus"
    keyword = RetrievalOptions(mode=SearchMode.KEYWORD)
    everything = await stores.retrieval.retrieve(question, top_k=3, options=keyword)
    assert max(m.score for m in everything.matches) > 1, "BM25 is not on the cosine's scale"
    kept = await stores.retrieval.retrieve(
        question, top_k=3, confidence_threshold=0.99, options=keyword
    )
    assert kept.matches == ()
    cosines = await stores.retrieval.retrieve(
        question, top_k=3, confidence_threshold=0.01, options=keyword
    )
    assert all(m.scores["dense"] >= 0.01 for m in cosines.matches)
    assert stores.embedder.queries, "the cosine needs the query's vector"


async def test_no_namespace_means_the_configured_default_for_both_searches(
    stores: Stores,
) -> None:
    result = await stores.retrieval.retrieve("blister blight", namespace=None)
    assert result.namespace == NS
    assert {"dense", "keyword"} <= result.matches[0].scores.keys()


async def test_top_k_is_what_returns_and_fetch_k_what_each_search_gives(stores: Stores) -> None:
    asked: list[int] = []
    search = stores.keywords.query

    async def recording(text: str, *, top_k: int, **kwargs: object) -> list:
        asked.append(top_k)
        return await search(text, top_k=top_k, **kwargs)

    stores.keywords.query = recording  # type: ignore[method-assign]
    options = RetrievalOptions(fetch_k=7)
    result = await stores.retrieval.retrieve("tea", top_k=1, options=options)
    assert len(result.matches) == 1
    assert asked == [7]


async def test_hybrid_with_both_weights_zero_is_refused(stores: Stores) -> None:
    zero = RetrievalOptions(dense_weight=0, keyword_weight=0)
    with pytest.raises(InvalidRequestError) as raised:
        await stores.retrieval.retrieve("tea", options=zero)
    assert raised.value.field == "options.keyword_weight"
    dense = zero.model_copy(update={"mode": SearchMode.DENSE})
    assert (await stores.retrieval.retrieve("tea", options=dense)).matches


async def test_a_failed_search_leaves_the_other_answering_and_flags_the_result(
    stores: Stores,
) -> None:
    async def down(*args: object, **kwargs: object) -> list:
        raise BackendUnavailableError("keyword index down")

    stores.keywords.query = down  # type: ignore[method-assign]
    result = await stores.retrieval.retrieve("blister blight fungus", top_k=2)
    assert result.degraded == ("keyword",)
    assert result.matches[0].document_id == "blister-blight"
    assert all(m.scores == {"dense": m.score} for m in result.matches)


RERANK = RetrievalOptions(rerank=True)


async def test_the_reranker_orders_the_best_candidates_and_their_texts_are_fetched_once(
    stores: Stores,
) -> None:
    reranker = WordOverlapReranker()
    service = stores.service(reranker=reranker)
    before = stores.chunks.get_many_calls
    result = await service.retrieve("monsoon weather", top_k=2, options=RERANK)
    assert stores.chunks.get_many_calls == before + 1
    [call] = reranker.calls
    assert call.query == "monsoon weather"
    assert result.matches[0].document_id == "monsoon"
    assert [m.score for m in result.matches] == [m.scores["rerank"] for m in result.matches]
    assert result.matches[0].scores["rerank"] == 1.0
    assert {"dense", "fused"} <= result.matches[0].scores.keys()


async def test_without_a_reranker_the_fused_order_stays_and_says_so(stores: Stores) -> None:
    plain = await stores.retrieval.retrieve("monsoon weather", top_k=3)
    asked = await stores.retrieval.retrieve("monsoon weather", top_k=3, options=RERANK)
    assert asked.degraded == ("rerank",)
    assert [m.chunk_id for m in asked.matches] == [m.chunk_id for m in plain.matches]
    assert all("rerank" not in m.scores for m in asked.matches)


async def test_the_reranker_sees_only_the_first_rerank_depth_candidates(stores: Stores) -> None:
    reranker = WordOverlapReranker()
    service = stores.service(reranker=reranker, plan=SearchPlan(rerank=True, rerank_depth=2))
    result = await service.retrieve("tea", top_k=3)
    assert len(reranker.calls[0].passages) == 2
    assert len(result.matches) == 2


async def test_a_cached_result_is_served_until_a_write_to_its_namespace_completes() -> None:
    stores = Stores(settings(result_cache_entries=1024))
    service, ingestion = stores.retrieval, stores.ingestion
    await ingestion.ingest(DOCUMENTS[:2], NS)
    first = await service.retrieve("pruning tea bushes", top_k=3)
    again = await service.retrieve("  pruning  tea bushes ", top_k=3)
    assert (first.cached, again.cached) == (False, True)
    assert again.matches == first.matches
    assert again.query == "  pruning  tea bushes "
    await ingestion.ingest(DOCUMENTS[2:], NS)
    after = await service.retrieve("pruning tea bushes", top_k=3)
    assert not after.cached
    assert after.matches[0].document_id == "pruning"
    await stores.library.delete_document("pruning", NS)
    assert "pruning" not in {
        m.document_id for m in (await service.retrieve("pruning tea bushes", top_k=3)).matches
    }


WEAK = "rain on the estates"
"""Matches something, but no chunk closely: its best cosine is well under 0.9."""


async def test_a_query_is_rewritten_only_when_asked_and_weak(stores: Stores) -> None:
    off = await stores.retrieval.retrieve(WEAK)
    strong = await stores.retrieval.retrieve(
        WEAK, options=RetrievalOptions(rewrite=True, rewrite_threshold=0.0)
    )
    weak = await stores.retrieval.retrieve(
        WEAK, options=RetrievalOptions(rewrite=True, rewrite_threshold=0.99)
    )
    assert off.rewrites == strong.rewrites == ()
    assert strong.matches == off.matches
    assert off.query_used == WEAK
    (rewrite,) = weak.rewrites
    best = max(m.scores["dense"] for m in off.matches)
    assert (rewrite.attempt, rewrite.method, rewrite.query) == (1, "rocchio", WEAK)
    assert rewrite.reason == f"best cosine {best:.3f} < 0.99"
    assert rewrite.best_cosine == max(m.scores["dense"] for m in weak.matches)
    assert rewrite.best_cosine > best, "feedback moves the query towards what it found"


async def test_rewrites_stop_after_the_configured_attempts(stores: Stores) -> None:
    service = stores.service(
        plan=SearchPlan(rewrite=True, rewrite_threshold=1.0, rewrite_attempts=3)
    )
    result = await service.retrieve(WEAK)
    assert [r.attempt for r in result.rewrites] == [1, 2, 3]
    assert result.matches


async def test_an_llm_rewrite_searches_with_the_models_query(stores: Stores) -> None:
    llm = ScriptedLlm(lambda request: '"blister blight fungus"\nThis names the disease.')
    service = stores.service(rewriter=LlmRewriter(llm))
    plain = await stores.retrieval.retrieve("tea leaves problem")
    result = await service.retrieve(
        "tea leaves problem", options=RetrievalOptions(rewrite=True, rewrite_threshold=0.99)
    )
    assert result.query_used == "blister blight fungus"
    assert result.query == "tea leaves problem"
    assert result.rewrites[0].query == "blister blight fungus"
    assert plain.matches[0].document_id == "pruning"
    assert result.matches[0].document_id == "blister-blight"
    assert llm.calls[0].messages[-1].content == "tea leaves problem"


def failing(request: object) -> str:
    raise BackendUnavailableError("model down")


@pytest.mark.parametrize("reply", [failing, lambda request: "  \n\n"], ids=["down", "blank"])
async def test_a_failed_rewrite_keeps_the_original_result(stores: Stores, reply) -> None:
    options = RetrievalOptions(rewrite=True, rewrite_threshold=0.99)
    plain = await stores.retrieval.retrieve(WEAK)
    with capture_logs() as logs:
        result = await stores.service(rewriter=LlmRewriter(ScriptedLlm(reply))).retrieve(
            WEAK, options=options
        )
    assert [m.chunk_id for m in result.matches] == [m.chunk_id for m in plain.matches]
    assert result.query_used == WEAK
    (rewrite,) = result.rewrites
    assert rewrite.reason.startswith("best cosine")
    assert rewrite.error
    assert rewrite.best_cosine is None
    assert any(e["event"] == "retrieve.rewrite_failed" for e in logs)


async def test_nothing_found_is_weak_too(stores: Stores) -> None:
    options = RetrievalOptions(rewrite=True, rewrite_threshold=0.5)
    feedback = await stores.retrieval.retrieve(WEAK, confidence_threshold=0.99, options=options)
    llm = ScriptedLlm(lambda request: "blister blight fungus")
    asked = await stores.service(rewriter=LlmRewriter(llm)).retrieve(
        WEAK, confidence_threshold=0.99, options=options
    )
    assert feedback.rewrites[0].reason == "nothing found"
    assert feedback.rewrites[0].error == "no candidates to learn from"
    assert asked.rewrites[0].reason == "nothing found"
    assert asked.rewrites[0].error is None
    assert asked.query_used == "blister blight fungus"


@pytest.mark.parametrize("threshold", [0.0, 0.2, 0.3])
async def test_a_rewrite_keeps_the_cosine_and_threshold_of_the_query_as_asked(
    stores: Stores, threshold: float
) -> None:
    every = await stores.retrieval.retrieve(
        WEAK, top_k=10, options=RetrievalOptions(mode=SearchMode.DENSE)
    )
    cosine = {m.chunk_id: m.scores["dense"] for m in every.matches}
    rewritten = await stores.retrieval.retrieve(
        WEAK,
        top_k=10,
        confidence_threshold=threshold,
        options=RetrievalOptions(rewrite=True, rewrite_threshold=1.0),
    )
    assert rewritten.rewrites[0].error is None
    assert {m.chunk_id: m.scores["dense"] for m in rewritten.matches} == pytest.approx(
        {m.chunk_id: cosine[m.chunk_id] for m in rewritten.matches}
    )
    assert all(m.scores["dense"] >= threshold for m in rewritten.matches)
    assert len(rewritten.matches) == sum(value >= threshold for value in cosine.values())


LLM_FILTER = RetrievalOptions(llm_filter=True)


def keeping_all_but(title: str) -> Reply:
    """A model's reply naming every passage but those of the document titled ``title``."""

    def reply(request: ChatRequest) -> str:
        prompt = request.messages[-1].content
        listed = re.findall(r"^\[(\d+)\] (.*)$", prompt, re.M)
        return ", ".join(number for number, text in listed if title not in text) or "none"

    return reply


async def test_the_llm_filter_drops_what_the_model_judges_irrelevant(stores: Stores) -> None:
    await stores.ingestion.ingest(
        [
            RagDocument(
                document_id="withering",
                title="Withering",
                domain="tea_cultivation",
                content="Withering dries plucked tea leaves before rolling.",
                metadata={"stage": "processing", "hours": 14},
            )
        ],
        NS,
    )
    llm = ScriptedLlm(keeping_all_but("Monsoon"))
    plain = await stores.retrieval.retrieve("tea leaves", top_k=4)
    before = stores.chunks.get_many_calls
    filtered = await stores.service(llm=llm).retrieve("tea leaves", top_k=4, options=LLM_FILTER)
    assert {"monsoon", "withering"} <= {m.document_id for m in plain.matches}
    assert filtered.matches == tuple(m for m in plain.matches if m.document_id != "monsoon")
    assert filtered.degraded == ()
    assert stores.chunks.get_many_calls == before + 1, "the fetch stage reuses the filter's"
    [call] = llm.calls
    assert call.messages[-1].content.startswith("Query: tea leaves")


async def test_without_the_option_the_model_is_not_asked(stores: Stores) -> None:
    llm = ScriptedLlm(lambda request: "none")
    plain = await stores.retrieval.retrieve("tea", top_k=3)
    asked = await stores.service(llm=llm).retrieve("tea", top_k=3)
    assert asked.matches == plain.matches
    assert llm.calls == []


def unconfigured(request: object) -> str:
    raise BackendNotConfiguredError("RETRIEVAL_LLM_BASE_URL is not set")


@pytest.mark.parametrize(
    "reply",
    [failing, lambda request: "The first one, I think.", unconfigured],
    ids=["down", "unreadable", "unconfigured"],
)
async def test_a_failed_llm_filter_keeps_the_candidates_and_says_degraded(
    stores: Stores, reply
) -> None:
    plain = await stores.retrieval.retrieve("tea", top_k=3)
    with capture_logs() as logs:
        result = await stores.service(llm=ScriptedLlm(reply)).retrieve(
            "tea", top_k=3, options=LLM_FILTER
        )
    assert result.matches == plain.matches
    assert result.degraded == (StageName.LLM_FILTER,)
    assert any(e["log_level"] == "warning" and "llm_filter" in e["event"] for e in logs)


def test_the_llm_filter_asks_the_searches_for_more_than_top_k() -> None:
    assert SearchPlan(mode=SearchMode.DENSE).depth(3) == 3
    assert SearchPlan(mode=SearchMode.DENSE, llm_filter=True).depth(3) == 100


async def test_a_match_s_metadata_is_the_caller_s_own(stores: Stores) -> None:
    tagged = RagDocument(
        document_id="withering",
        title="Withering",
        domain="tea_cultivation",
        content="Withering softens plucked leaves before rolling.",
        metadata={"tags": ["processing"], "stage": "first"},
    )
    await stores.ingestion.ingest([tagged], NS)
    first = (await stores.retrieval.retrieve("withering plucked leaves", top_k=1)).matches[0]
    first.metadata["tags"].append("changed")
    first.metadata["stage"] = "changed"
    again = (await stores.retrieval.retrieve("withering plucked leaves", top_k=1)).matches[0]
    assert again.metadata == {"tags": ["processing"], "stage": "first"}


def test_an_error_names_at_most_ten_unknown_domains() -> None:
    with pytest.raises(InvalidRequestError) as raised:
        check_domains([f"unknown_{n:04}" for n in range(3000)], ["tea_cultivation"])
    message = str(raised.value)
    assert len(message) < 300
    assert "unknown_0000, unknown_0001" in message
    assert "and 2990 more" in message
    assert message.endswith("not in RETRIEVAL_ALLOWED_DOMAINS (tea_cultivation)")


@pytest.mark.parametrize("mode", list(SearchMode))
async def test_a_namespace_whose_documents_were_all_deleted_is_not_found_in_every_mode(
    stores: Stores, mode: SearchMode
) -> None:
    await stores.library.delete(NS, [document.document_id for document in DOCUMENTS])
    with pytest.raises(NamespaceNotFoundError):
        await stores.retrieval.retrieve("tea", options=RetrievalOptions(mode=mode))
