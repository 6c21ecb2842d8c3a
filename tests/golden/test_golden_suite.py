"""The golden suite through the production services, with the real model; and its data files."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from retrieval.adapters.embedded_index.bm25_keyword_index import Bm25KeywordIndex
from retrieval.adapters.embedded_index.vector_index import EmbeddedVectorIndex
from retrieval.adapters.mongo.chunk_repository import MongoChunkRepository
from retrieval.domain.models import DEFAULT_DOMAINS
from retrieval.domain.vectors import QueryMatch
from retrieval.errors import InvalidRequestError
from retrieval.evaluation.golden import GoldenReport, golden_namespace, run_golden
from retrieval.evaluation.golden_suite import GoldenSample, GoldenSuite
from retrieval.evaluation.reports import write_golden_reports
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.ingestion.library_service import Library
from retrieval.service.retrieval.pipeline import SearchPlan
from retrieval.service.retrieval.retrieval_service import RetrievalService
from retrieval_testkit.stages import offline_stages, uncached
from retrieval_testkit.telemetry import quiet_telemetry

MIN_HIT_AT_5 = 0.85
MIN_MRR = 0.90
MIN_NDCG_AT_10 = 0.88


def test_data_files_are_a_usable_suite(golden_suite: GoldenSuite) -> None:
    """Loading already checked ids, domains and filters; here: size and shape."""
    words = {doc.document_id: len(doc.content.split()) for doc in golden_suite.documents}
    assert len(words) >= 12
    assert all(200 <= count <= 600 for count in words.values()), words
    assert {doc.domain for doc in golden_suite.documents} == set(DEFAULT_DOMAINS)
    assert len(golden_suite.samples) >= 40
    assert len({sample.id for sample in golden_suite.samples}) == len(golden_suite.samples)
    negatives = [sample for sample in golden_suite.samples if sample.is_negative]
    assert negatives
    assert all(sample.confidence_threshold > 0 for sample in negatives)
    answered = {doc for sample in golden_suite.samples for doc in sample.relevant}
    assert answered == set(words), "every seed document answers some sample"


async def namespace_is_gone(
    namespace: str, index: EmbeddedVectorIndex, chunks: MongoChunkRepository
) -> bool:
    return namespace not in (await index.stats()).namespaces and not await chunks.count(namespace)


async def test_suite_meets_the_target(
    golden_suite: GoldenSuite,
    retrieval: RetrievalService,
    ingestion: IngestionService,
    library: Library,
    index: EmbeddedVectorIndex,
    mongo_repository: MongoChunkRepository,
    tmp_path: Path,
) -> None:
    namespace = golden_namespace(golden_suite.name)
    report = await run_golden(
        golden_suite, retrieval, ingestion, library, namespace=namespace, answers=None
    )

    failures = [(row.id, row.query, row.returned[:3]) for row in report.rows if not row.passed]
    assert report.hit_at_5 >= MIN_HIT_AT_5, failures
    assert (report.mrr or 0.0) >= MIN_MRR
    assert (report.ndcg_at_10 or 0.0) >= MIN_NDCG_AT_10
    assert report.by_kind["negative"].hit_at_5 == 1.0
    assert report.samples == len(golden_suite.samples) == len(report.rows)
    assert await namespace_is_gone(namespace, index, mongo_repository)

    written = write_golden_reports(report, tmp_path, MIN_HIT_AT_5)
    assert [path.name for path in written] == ["golden.json", "golden.md", "golden.png"]
    data = json.loads(written[0].read_text())
    assert {"samples", "hit_at_5", "mrr", "ndcg_at_10", "p95_ms", "rows"} <= data.keys()
    assert written[2].read_bytes().startswith(b"\x89PNG")


class RecordingIndex:
    """The index, noting for every query the namespace searched and how many vectors it held,
    and how many namespaces existed at the time."""

    def __init__(self, inner: EmbeddedVectorIndex) -> None:
        self._inner = inner
        self.queried: list[tuple[str, int]] = []
        self.namespaces_seen: set[int] = set()

    def __getattr__(self, name: str):
        return getattr(self._inner, name)

    async def query(self, vector: Sequence[float], **options) -> list[QueryMatch]:
        namespace = options["namespace"]
        namespaces = (await self._inner.stats()).namespaces
        self.queried.append((namespace, namespaces[namespace].vector_count))
        self.namespaces_seen.add(len(namespaces))
        return await self._inner.query(vector, **options)


def ranking_figures(report: GoldenReport) -> tuple:
    return (
        report.hit_at_5,
        report.recall_at_5,
        report.mrr,
        report.ndcg_at_10,
        [[(d.document_id, round(d.score, 5)) for d in row.returned] for row in report.rows],
    )


async def test_two_concurrent_runs_do_not_meet(
    golden_suite: GoldenSuite,
    golden_embedder,
    ingestion: IngestionService,
    library: Library,
    index: EmbeddedVectorIndex,
    keywords: Bm25KeywordIndex,
    mongo_repository: MongoChunkRepository,
) -> None:
    recording = RecordingIndex(index)
    retrieval = RetrievalService(
        offline_stages(golden_embedder, recording, keywords, mongo_repository),
        DEFAULT_DOMAINS,
        "default",
        SearchPlan(),
        uncached(),
        quiet_telemetry(),
    )
    first, second = await asyncio.gather(
        *(
            run_golden(
                golden_suite,
                retrieval,
                ingestion,
                library,
                namespace=golden_namespace(golden_suite.name),
                answers=None,
            )
            for _ in range(2)
        )
    )

    assert first.namespace != second.namespace
    assert 2 in recording.namespaces_seen, "the two runs overlapped"
    assert ranking_figures(first) == ranking_figures(second)
    for report in (first, second):
        seen = [held for namespace, held in recording.queried if namespace == report.namespace]
        assert seen == [report.chunks] * len(golden_suite.samples)
        assert await namespace_is_gone(report.namespace, index, mongo_repository)
    assert {namespace for namespace, _ in recording.queried} == {
        first.namespace,
        second.namespace,
    }


async def test_namespace_is_removed_when_a_run_fails_midway(
    golden_suite: GoldenSuite,
    retrieval: RetrievalService,
    ingestion: IngestionService,
    library: Library,
    index: EmbeddedVectorIndex,
    mongo_repository: MongoChunkRepository,
) -> None:
    unanswerable = GoldenSample(
        id="bad", query="anything", relevant={}, domains=("astrology",),
        confidence_threshold=0.5, kind="negative",
    )  # fmt: skip
    broken = golden_suite.model_copy(
        update={"samples": (*golden_suite.samples[:3], unanswerable, *golden_suite.samples[3:])}
    )
    namespace = golden_namespace(golden_suite.name)

    with pytest.raises(InvalidRequestError, match="astrology"):
        await run_golden(broken, retrieval, ingestion, library, namespace=namespace, answers=None)

    assert await namespace_is_gone(namespace, index, mongo_repository)
