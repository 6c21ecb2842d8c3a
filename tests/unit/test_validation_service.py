"""ValidationService on the container's graph over the in-memory stores and the hash embedder:
a healthy namespace passes, a damaged one fails and names the damaged documents."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from retrieval.domain.models import DEFAULT_DOMAINS, RagDocument
from retrieval.domain.validation import CaseSource, ValidationRequest, parse_case_file
from retrieval.errors import InvalidRequestError, NamespaceNotFoundError
from retrieval.lifecycle import Application, running
from retrieval.settings import Settings
from retrieval_testkit import (
    InMemoryChunkRepository,
    InMemoryKeywordIndex,
    InMemoryVectorIndex,
)
from retrieval_testkit.container import in_memory_container

NS = "estate"


def document(document_id: str, title: str, domain: str, content: str, **metadata: str):
    return RagDocument(
        document_id=document_id,
        title=title,
        domain=domain,
        content=content,
        metadata=metadata,
    )


BLIGHT = document(
    "blister-blight",
    "Blister blight",
    "plant_diseases",
    "Blister blight (Exobasidium vexans) spreads in wet, misty weather. Growers spray copper "
    "fungicide and shorten plucking rounds.",
    region="assam",
    source="board",
)
FROST = document(
    "frost",
    "Frost protection",
    "weather_patterns",
    "Ground frost scorches the plucking table on clear still nights. Thatch and shade trees "
    "keep young tea bushes warm.",
    region="nilgiris",
    source="board",
)
PRUNING = document(
    "pruning",
    "Pruning cycles",
    "tea_cultivation",
    "Tea bushes are pruned every three to five years to keep the plucking table low and renew "
    "the frame of the bush.",
    region="assam",
)
GRADING = document(
    "grading",
    "Black tea grading",
    "quality_standards",
    "Orthodox black tea is graded by leaf size: whole leaf, broken, fannings and dust. CTC "
    "teas brew strong and fast.",
)
WITHERING = document(
    "withering",
    "Withering green leaf",
    "quality_standards",
    "Withering takes 14 to 18 hours: green leaf is spread on troughs until the withering "
    "leaf loses a third of its moisture.",
)
DOCUMENTS = [BLIGHT, FROST, PRUNING, GRADING, WITHERING]


@dataclass
class Stack:
    app: Application
    index: InMemoryVectorIndex
    chunks: InMemoryChunkRepository

    async def lose_vectors(self, document_id: str) -> None:
        """What a failed restore or a hand-run delete leaves: texts without their vectors."""
        ids = await self.chunks.chunk_ids(document_id, NS)
        await self.index.delete(namespace=NS, ids=sorted(ids))


@pytest.fixture
async def stack(tmp_path: Path) -> AsyncIterator[Stack]:
    settings = Settings(data_dir=tmp_path, result_cache_entries=0, allowed_domains=DEFAULT_DOMAINS)
    index, chunks = InMemoryVectorIndex(), InMemoryChunkRepository()
    container = in_memory_container(
        settings,
        vector_index=index,
        keyword_index=InMemoryKeywordIndex(),
        chunk_repository=chunks,
    )
    async with running(settings, container) as app:
        await app.ingestion.ingest(DOCUMENTS, NS)
        yield Stack(app, index, chunks)


async def test_a_healthy_namespace_passes_its_smoke_set(stack: Stack) -> None:
    report = await stack.app.validation.validate(ValidationRequest(namespace=NS, top_k=1))
    assert report.passed, report.failed_queries
    assert report.source is CaseSource.SMOKE
    assert (report.total_queries, report.passed_queries) == (len(DOCUMENTS), len(DOCUMENTS))
    assert report.success_rate == 1.0
    assert report.success_criterion == 0.8
    assert report.by_query_type["factual"].total == len(DOCUMENTS)
    assert report.vector_count == report.chunk_count == len(DOCUMENTS)
    assert report.top_score.count == len(DOCUMENTS)
    assert 0 < report.top_score.min <= report.top_score.median <= report.top_score.max <= 1
    assert report.expected_metadata == ("region", "source")
    assert report.metadata_completeness == 2 / 5
    assert report.problems == ()


async def test_a_document_without_vectors_and_one_under_a_title_that_is_not_its_own_fail_by_name(
    stack: Stack,
) -> None:
    await stack.lose_vectors("frost")
    # a converter's default title on two field reports: only one can answer to it
    reports = [
        document(
            "notes-assam",
            "Field notes",
            "plant_diseases",
            "Red rust showed orange patches on stressed bushes after the rains.",
        ),
        document(
            "notes-nilgiris",
            "Field notes",
            "weather_patterns",
            "Hail tore young shoots on the upper slopes in April.",
        ),
    ]
    await stack.app.ingestion.ingest(reports, NS)

    report = await stack.app.validation.validate(ValidationRequest(namespace=NS, top_k=1))

    assert not report.passed
    assert (report.total_queries, report.passed_queries) == (7, 5)
    failed = {outcome.id: outcome.reasons for outcome in report.failed_queries}
    assert failed.pop("frost") == (
        "expected document frost found by keyword search only: its chunks have no vectors "
        "(no cosine similarity)",
    )
    [(unanswered, reasons)] = failed.items()
    [found] = {"notes-assam", "notes-nilgiris"} - {unanswered}
    assert reasons == (f"expected document {unanswered} not in top 1 (found {found})",)
    assert report.vector_count == report.chunk_count - 1
    assert report.problems == (
        f"1 chunk texts have no vector ({report.chunk_count} texts, {report.vector_count} "
        "vectors): run retrieval reconcile",
    )


async def test_a_namespace_with_texts_without_vectors_fails_whatever_its_queries_find(
    stack: Stack,
) -> None:
    await stack.lose_vectors("frost")
    lenient = ValidationRequest(namespace=NS, top_k=1, success_criterion=0.5)
    report = await stack.app.validation.validate(lenient)
    assert report.success_rate >= 0.5
    assert not report.passed
    assert len(report.problems) == 1
    assert report.problems[0].startswith("1 chunk texts have no vector")


async def test_a_namespace_whose_index_was_lost_fails_every_query_with_the_error(
    stack: Stack,
) -> None:
    await stack.index.delete(namespace=NS, delete_all=True)
    report = await stack.app.validation.validate(ValidationRequest(namespace=NS))
    assert (report.vector_count, report.chunk_count) == (0, len(DOCUMENTS))
    assert report.passed_queries == 0
    assert not report.passed
    assert {outcome.reasons for outcome in report.failed_queries} == {
        (f"retrieval failed: namespace {NS!r} does not exist or holds no vectors",)
    }
    assert report.top_score.count == 0
    assert report.top_score.mean is None


CASES = {
    "cases": [
        {
            "id": "blight-by-id",
            "query": "copper fungicide for blister blight",
            "expected_document_ids": ["blister-blight"],
        },
        {
            "id": "wrong-document",
            "query": "frost on clear still nights",
            "expected_document_ids": ["pruning"],
        },
        {
            "id": "frost-keywords",
            "query": "how do growers keep bushes warm against frost",
            "expected_keywords": ["thatch", "SHADE", "frost", "hail"],
            "query_type": "procedural",
        },
        {
            "id": "missing-keywords",
            "query": "how do growers keep bushes warm against frost",
            "expected_keywords": ["thatch", "shade", "hail", "snow", "sleet", "smudge pots"],
            "query_type": "procedural",
        },
        {
            "id": "too-strict",
            "query": "what makes black tea strong",
            "min_score": 0.99,
            "query_type": "conceptual",
        },
        {
            "id": "lenient",
            "query": "what makes black tea strong",
            "min_score": -1,
            "query_type": "conceptual",
        },
        {"query": "tea", "query_type": "edge_case", "domains": ["quality_standards"]},
    ],
    "expected_metadata": ["region"],
}


async def test_a_case_file_grades_ids_keywords_and_scores_by_query_type(stack: Stack) -> None:
    suite = parse_case_file(json.dumps(CASES))
    request = ValidationRequest(
        namespace=NS, cases=suite.cases, expected_metadata=suite.expected_metadata, top_k=2
    )
    report = await stack.app.validation.validate(request)

    assert report.source is CaseSource.CASES
    assert (report.total_queries, report.passed_queries) == (7, 4)
    assert report.success_rate == 4 / 7
    assert not report.passed
    reasons = {outcome.id: outcome.reasons for outcome in report.failed_queries}
    assert reasons.keys() == {"wrong-document", "missing-keywords", "too-strict"}
    [wrong] = reasons["wrong-document"]
    assert wrong.startswith("expected document pruning not in top 2 (found frost")
    assert reasons["missing-keywords"] == (
        "2 of 6 keywords in the top 3; missing: hail, snow, sleet, smudge pots",
    )
    [strict] = reasons["too-strict"]
    assert strict.startswith("top score ")
    assert strict.endswith(" < 0.99")
    figures = {kind: (g.total, g.passed) for kind, g in report.by_query_type.items()}
    assert figures == {
        "conceptual": (2, 1),
        "edge_case": (1, 1),
        "factual": (2, 1),
        "procedural": (2, 1),
    }
    asked = [
        await stack.app.retrieval.retrieve(case.query, case.domains, 2, namespace=NS)
        for case in suite.cases
    ]
    cosines = [result.matches[0].scores["dense"] for result in asked]
    assert report.top_score.count == 7
    assert (report.top_score.min, report.top_score.max) == (min(cosines), max(cosines))
    assert report.expected_metadata == ("region",)
    assert report.metadata_completeness == 3 / 5

    lenient = await stack.app.validation.validate(
        request.model_copy(update={"success_criterion": 0.5})
    )
    assert lenient.passed
    assert lenient.success_criterion == 0.5


async def test_an_unknown_namespace_is_not_found(stack: Stack) -> None:
    with pytest.raises(NamespaceNotFoundError, match="never-written"):
        await stack.app.validation.validate(ValidationRequest(namespace="never-written"))


async def test_a_case_with_an_unknown_domain_is_refused_naming_it(stack: Stack) -> None:
    suite = parse_case_file(json.dumps([{"query": "tea"}, {"query": "tea", "domains": ["coffee"]}]))
    with pytest.raises(InvalidRequestError) as raised:
        await stack.app.validation.validate(ValidationRequest(namespace=NS, cases=suite.cases))
    assert raised.value.field == "cases.1.domains"
    assert "domain coffee is not in RETRIEVAL_ALLOWED_DOMAINS" in str(raised.value)
