"""The golden runner and suite loader over the in-memory doubles: grading, checks, clean-up."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from retrieval.cli.golden import model_answers
from retrieval.domain.models import DEFAULT_DOMAINS, RagDocument, RetrievalMatch, RetrievalQuery
from retrieval.errors import BackendUnavailableError, InvalidRequestError
from retrieval.evaluation.ablation import (
    DEFAULT_VARIANT,
    LLM_FILTER_VARIANT,
    REPEAT_VARIANT,
    RERANK_VARIANT,
    VARIANTS,
    ablation_variants,
    ask_every_variant,
)
from retrieval.evaluation.golden import run_golden
from retrieval.evaluation.golden_report import (
    ALL_DOMAINS,
    ReturnedDocument,
    SampleAnswer,
    best_per_document,
    grade,
)
from retrieval.evaluation.golden_suite import GoldenSample, load_suite
from retrieval.evaluation.reports import golden_markdown
from retrieval.service.answers.answer_service import AnswerService
from retrieval.service.caching.freshness import NamespaceFreshness, NoIndexLsns
from retrieval.service.caching.result_cache import InProcessResultCache
from retrieval.service.ingestion.chunking import ChunkingPolicy
from retrieval.service.ingestion.consistency import ChunkStores
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.ingestion.library_service import Library
from retrieval.service.retrieval.pipeline import SearchPlan
from retrieval.service.retrieval.retrieval_service import RetrievalService
from retrieval.settings import Settings
from retrieval_testkit import (
    ChatRequest,
    HashEmbedder,
    InMemoryChunkRepository,
    InMemoryDocumentLedger,
    InMemoryKeywordIndex,
    InMemoryVectorIndex,
    ScriptedLlm,
)
from retrieval_testkit.in_memory_namespace_generations import InMemoryNamespaceGenerations
from retrieval_testkit.stages import offline_stages, uncached
from retrieval_testkit.telemetry import quiet_telemetry

DOCUMENTS = [
    ("blight", "plant_diseases", "Blister blight fungus spores infect tender leaves in mist."),
    ("frost", "weather_patterns", "Ground frost on clear winter nights scorches the bushes."),
    ("grades", "quality_standards", "Orthodox grades such as FTGFOP name leaf size and tips."),
]
SAMPLES = [
    {"id": "a", "query": "blister blight fungus spores", "relevant": {"blight": 2},
     "kind": "keyword"},
    {"id": "b", "query": "ground frost winter nights", "relevant": {"frost": 2},
     "domains": ["weather_patterns"], "kind": "domain_filter"},
    {"id": "c", "query": "FTGFOP orthodox grades", "relevant": {"grades": 2, "blight": 1},
     "kind": "keyword"},
    {"id": "n", "query": "sourdough hydration", "relevant": {}, "confidence_threshold": 0.99,
     "kind": "negative"},
]  # fmt: skip


def write_suite(directory: Path, samples: list[dict]) -> Path:
    documents = [
        {"document_id": doc_id, "title": doc_id.title(), "domain": domain, "content": text}
        for doc_id, domain, text in DOCUMENTS
    ]
    (directory / "retrieval").mkdir(parents=True)
    (directory / "seed_documents.json").write_text(json.dumps({"documents": documents}))
    (directory / "retrieval" / "samples.json").write_text(json.dumps({"samples": samples}))
    return directory


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"relevant": {"nowhere": 2}}, "'nowhere' is not a seed document"),
        ({"domains": ["plant_diseases"]}, "outside its domain filter"),
        ({"domains": ["astrology"]}, "domain astrology is not in RETRIEVAL_ALLOWED_DOMAINS"),
        ({"relevant": {}, "confidence_threshold": 0.0}, "needs a confidence_threshold"),
        ({"id": "a"}, "id used twice"),
        ({"surprise": 1}, "Extra inputs are not permitted"),
    ],
)
def test_suite_problems_are_named(tmp_path: Path, change: dict, problem: str) -> None:
    write_suite(tmp_path / "suite", [*SAMPLES, {**SAMPLES[1], "id": "x", **change}])
    with pytest.raises(InvalidRequestError, match=problem):
        load_suite(tmp_path / "suite", DEFAULT_DOMAINS)


def test_a_negative_passes_only_when_nothing_reaches_its_threshold() -> None:
    negative = GoldenSample(
        id="n", query="q", relevant={}, confidence_threshold=0.8, kind="negative"
    )

    def returned(cosine: float | None) -> list[ReturnedDocument]:
        return [ReturnedDocument(document_id="d", domain="x", score=0.99, cosine=cosine)]

    below = grade(negative, returned(0.79), 1.0)
    at = grade(negative, returned(0.8), 1.0)
    unknown = grade(negative, returned(None), 1.0)
    assert (below.passed, below.hit_at_5, below.ndcg_at_10) == (True, 1.0, None)
    assert (at.passed, at.hit_at_5) == (False, 0.0)
    assert unknown.passed, "a threshold needs a known cosine, as the service applies it"


def test_a_document_ranks_where_its_best_chunk_ranks() -> None:
    def match(chunk: str, document: str, score: float) -> RetrievalMatch:
        return RetrievalMatch(
            chunk_id=chunk, content="text", score=score, document_id=document, title="t", domain="x"
        )

    returned = best_per_document(
        [match("a1", "a", 0.9), match("b1", "b", 0.8), match("a2", "a", 0.7)]
    )
    assert [(d.document_id, d.score) for d in returned] == [("a", 0.9), ("b", 0.8)]
    sample = GoldenSample(id="s", query="q", relevant={"b": 2}, kind="direct")
    row = grade(sample, returned, 1.0)
    assert (row.first_relevant_rank, row.reciprocal_rank, row.passed) == (2, 0.5, True)


def golden_services(
    index: InMemoryVectorIndex, chunks: InMemoryChunkRepository
) -> tuple[RetrievalService, IngestionService, Library]:
    """Retrieval, ingestion and the library over the in-memory doubles, writing to ``index``
    and ``chunks``."""
    embedder, keywords = HashEmbedder(), InMemoryKeywordIndex()
    retrieval = RetrievalService(
        offline_stages(embedder, index, keywords, chunks),
        DEFAULT_DOMAINS,
        "default",
        SearchPlan(),
        uncached(),
        quiet_telemetry(),
    )
    ledger, generations = InMemoryDocumentLedger(), InMemoryNamespaceGenerations()
    ingestion = IngestionService(
        embedder,
        ChunkStores(index, keywords, chunks),
        ledger,
        generations,
        DEFAULT_DOMAINS,
        "default",
        ChunkingPolicy(),
    )
    library = Library(ChunkStores(index, keywords, chunks), ledger, generations, "default", 30.0)
    return retrieval, ingestion, library


async def test_run_grades_every_sample_and_leaves_nothing_behind(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path / "tiny", SAMPLES), DEFAULT_DOMAINS)
    index, chunks = InMemoryVectorIndex(), InMemoryChunkRepository()
    retrieval, ingestion, library = golden_services(index, chunks)
    stages: list[tuple[str, int, int]] = []

    report = await run_golden(
        suite,
        retrieval,
        ingestion,
        library,
        namespace="golden-tiny",
        variants=VARIANTS,
        answers=None,
        progress=lambda *s: stages.append(s),
    )

    assert (report.samples, report.negatives, report.documents) == (4, 1, 3)
    assert report.hit_at_5 == 1.0
    assert report.mrr == 1.0
    assert [row.passed for row in report.rows] == [True] * 4
    assert list(report.by_domain) == ["plant_diseases", "quality_standards", "weather_patterns"]
    assert report.by_domain["plant_diseases"].samples == 2
    assert report.by_kind["negative"].mrr is None
    relevant_returned = [
        d for row in report.rows for d in row.returned if d.document_id in row.expected
    ]
    assert report.thresholds[ALL_DOMAINS].relevant.count == len(relevant_returned) >= 3
    assert report.thresholds[ALL_DOMAINS].suggestion is not None
    assert stages[-1] == ("ask", 4, 4)
    assert ("seed", 3, 3) in stages
    assert set(report.ablation) == set(VARIANTS)
    default = report.ablation[DEFAULT_VARIANT]
    assert (default.hit_at_5, default.mrr, default.ndcg_at_10) == (
        report.hit_at_5,
        report.mrr,
        report.ndcg_at_10,
    )
    assert report.ablation["keyword only"].options == {"mode": "keyword"}
    graded = [row for row in report.rows if row.expected]
    found = [{d.document_id for d in row.returned} & row.expected.keys() for row in graded]
    assert report.context_recall == pytest.approx(
        sum(len(f) / len(row.expected) for f, row in zip(found, graded, strict=True)) / len(graded)
    ), "every returned chunk fits the budget, so the context holds every returned document"
    assert report.context_precision == pytest.approx(
        sum(len(f) / len(row.returned) for f, row in zip(found, graded, strict=True)) / len(graded)
    ), "one chunk per document here, so chunks and documents count alike"
    assert await chunks.count("golden-tiny") == 0
    assert "golden-tiny" not in (await index.stats()).namespaces


def cite_first_grades_and_seven(request: ChatRequest) -> str:
    """Cites [1], the Grades passage and [7], which no context of three passages has;
    cites nothing about FTGFOP; fails on frost."""
    prompt = request.messages[-1].content
    question = prompt.rsplit("Question: ", 1)[1]
    if "frost" in question:
        raise BackendUnavailableError("the model is overloaded")
    if "FTGFOP" in question:
        return "I do not know."
    grades = re.search(r"^\[(\d+)\] Grades ", prompt, re.MULTILINE)
    assert grades is not None, prompt
    return f"Blister blight spreads in mist [1][{grades[1]}][7]."


async def test_with_a_model_every_graded_sample_is_answered_and_its_citations_graded(
    tmp_path: Path,
) -> None:
    suite = load_suite(write_suite(tmp_path / "tiny", SAMPLES), DEFAULT_DOMAINS)
    index, chunks = InMemoryVectorIndex(), InMemoryChunkRepository()
    retrieval, ingestion, library = golden_services(index, chunks)
    llm = ScriptedLlm(cite_first_grades_and_seven)
    stages: list[tuple[str, int, int]] = []

    report = await run_golden(
        suite,
        retrieval,
        ingestion,
        library,
        namespace="golden-tiny",
        answers=AnswerService(retrieval, llm),
        progress=lambda *s: stages.append(s),
    )

    answers = {row.id: row.answer for row in report.rows}
    assert answers["a"] == SampleAnswer(
        answered=True,
        cited_documents=("blight", "grades"),
        unknown_citations=(7,),
        citation_precision=0.5,
    )
    assert answers["c"] == SampleAnswer(answered=True, citation_precision=0.0)
    assert answers["b"] == SampleAnswer(answered=False, error="the model is overloaded")
    assert answers["n"] is None, "a negative is not answered"
    assert len(llm.calls) == 3
    assert (report.answered, report.answer_failures) == (2, 1)
    assert report.citation_precision == 0.25
    assert report.answered_with_citations == 0.5
    assert report.unknown_citation_rate == pytest.approx(1 / 3)
    assert stages[-1] == ("answer", 3, 3)
    markdown = golden_markdown(report, 0.85)
    assert "| citation precision | 0.250 |" in markdown
    assert "| samples answered (failed) | 2 (1) |" in markdown
    assert report.model_dump(mode="json")["rows"][0]["answer"]["cited_documents"] == [
        "blight",
        "grades",
    ]
    assert await chunks.count("golden-tiny") == 0


async def test_without_a_model_there_are_no_answer_figures_and_no_call(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path / "tiny", SAMPLES), DEFAULT_DOMAINS)
    retrieval, ingestion, library = golden_services(
        InMemoryVectorIndex(), InMemoryChunkRepository()
    )
    llm = ScriptedLlm()
    unconfigured = Settings(_env_file=None, llm_base_url=None)

    report = await run_golden(
        suite,
        retrieval,
        ingestion,
        library,
        namespace="golden-tiny",
        answers=model_answers(AnswerService(retrieval, llm), unconfigured),
    )

    assert llm.calls == []
    figures = (report.answered, report.answer_failures, report.citation_precision,
               report.answered_with_citations, report.unknown_citation_rate)  # fmt: skip
    assert figures == (None,) * 5
    assert all(row.answer is None for row in report.rows)
    assert "| answers | no model configured |" in golden_markdown(report, 0.85)
    configured = unconfigured.model_copy(update={"llm_base_url": "http://127.0.0.1:9/v1"})
    answers = AnswerService(retrieval, llm)
    assert model_answers(answers, configured) is answers


def test_the_rerank_and_llm_filter_rows_join_the_ablation_only_with_their_backends() -> None:
    without = Settings(_env_file=None, result_cache_entries=0, llm_base_url=None)
    assert ablation_variants(without).keys() == VARIANTS.keys()
    with_reranker = ablation_variants(without.model_copy(update={"rerank_backend": "pinecone"}))
    assert with_reranker[RERANK_VARIANT].rerank is True
    assert with_reranker.keys() - {RERANK_VARIANT} == VARIANTS.keys()
    with_llm = ablation_variants(
        without.model_copy(update={"llm_base_url": "http://localhost:8000/v1"})
    )
    assert with_llm[LLM_FILTER_VARIANT].llm_filter is True
    assert with_llm.keys() - {LLM_FILTER_VARIANT} == VARIANTS.keys()


async def test_the_repeat_row_asks_the_default_again_and_the_cache_answers() -> None:
    index, chunks, embedder = InMemoryVectorIndex(), InMemoryChunkRepository(), HashEmbedder()
    keywords, generations = InMemoryKeywordIndex(), InMemoryNamespaceGenerations()
    ingestion = IngestionService(
        embedder, ChunkStores(index, keywords, chunks), InMemoryDocumentLedger(), generations,
        DEFAULT_DOMAINS, "default", ChunkingPolicy(),
    )  # fmt: skip
    await ingestion.ingest(
        [RagDocument(document_id=d, title=d, domain=domain, content=text)
         for d, domain, text in DOCUMENTS], "tea",
    )  # fmt: skip
    retrieval = RetrievalService(
        offline_stages(embedder, index, keywords, chunks), DEFAULT_DOMAINS,
        "tea", SearchPlan(),
        InProcessResultCache(NamespaceFreshness(generations, NoIndexLsns(), 0)), quiet_telemetry(),
    )  # fmt: skip
    variants = ablation_variants(Settings(_env_file=None))
    requests = [RetrievalQuery(query=sample["query"]) for sample in SAMPLES]

    answers = await ask_every_variant(retrieval, requests, variants)

    assert REPEAT_VARIANT in variants
    assert all(result.cached for result in answers[REPEAT_VARIANT])
    assert not any(result.cached for result in answers[DEFAULT_VARIANT])
    assert [r.matches for r in answers[REPEAT_VARIANT]] == [
        r.matches for r in answers[DEFAULT_VARIANT]
    ]
    assert all(r.timings.stages.keys() == {"cache"} for r in answers[REPEAT_VARIANT])
