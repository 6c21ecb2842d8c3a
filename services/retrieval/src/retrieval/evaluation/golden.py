"""The golden run: seed a suite into a namespace of its own, ask every sample, grade the answers.

The production code paths all the way: ``IngestionService.ingest`` chunks and embeds the
seed documents with the configured embedder, ``RetrievalService.retrieve`` answers each
sample with its domain filter, without a confidence threshold (``golden_report`` applies
each sample's own).

With a chat model configured, ``AnswerService.answer`` then answers every sample that has
relevant documents (the default's request again), one sample at a time: a local model
server answers one request at a time anyway, and a rate-limited API is not flooded. A
sample the model fails on is recorded as failed and the run goes on. Without a model the
answer figures are None and no model is called.

The namespace is removed (vectors, then chunk texts) when the run ends, failed or not.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping, Sequence

import structlog

from retrieval.domain.models import RetrievalOptions, RetrievalQuery
from retrieval.errors import IngestionError, RetrievalError
from retrieval.evaluation.ablation import DEFAULT_VARIANT, ask_every_variant
from retrieval.evaluation.golden_report import (
    GoldenReport,
    SampleAnswer,
    answer_figures,
    best_per_document,
    context_figures,
    grade,
    summarise,
    variant_figures,
)
from retrieval.evaluation.golden_suite import GoldenSuite
from retrieval.service.answers.answer_service import AnswerService
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.ingestion.library_service import Library
from retrieval.service.ingestion.outcomes import DocumentOutcome, Outcome
from retrieval.service.retrieval.retrieval_service import RetrievalService

ONLY_DEFAULT = {DEFAULT_VARIANT: RetrievalOptions()}
Progress = Callable[[str, int, int], None]
"""Called with a stage name ("seed", "ask" or "answer"), the items done so far and the
stage's total."""

log = structlog.get_logger("retrieval")


def golden_namespace(suite: str) -> str:
    """A namespace no other run uses: ``golden-<suite>-<8 random hex digits>``."""
    return f"golden-{suite[:100]}-{uuid.uuid4().hex[:8]}"


async def seed(
    ingestion: IngestionService, suite: GoldenSuite, namespace: str, progress: Progress | None
) -> int:
    """Ingest the seed documents; returns the chunk count. Raises if any document failed."""
    done = 0

    def seeded(group: Sequence[DocumentOutcome]) -> None:
        nonlocal done
        done += len(group)
        if progress is not None:
            progress("seed", done, len(suite.documents))

    outcomes = await ingestion.ingest(suite.documents, namespace, on_progress=seeded)
    failed = [outcome for outcome in outcomes if outcome.outcome == Outcome.FAILED]
    if failed:
        raise IngestionError(f"seeding failed for {failed[0].document_id}: {failed[0].error}")
    return sum(outcome.chunks for outcome in outcomes)


async def run_golden(
    suite: GoldenSuite,
    retrieval: RetrievalService,
    ingestion: IngestionService,
    library: Library,
    *,
    namespace: str,
    answers: AnswerService | None,
    top_k: int = 10,
    variants: Mapping[str, RetrievalOptions] = ONLY_DEFAULT,
    context_tokens: int = 3000,
    progress: Progress | None = None,
) -> GoldenReport:
    """Seed ``suite`` into ``namespace``, answer every sample under each variant (the
    report's figures are the default's), have ``answers`` answer the samples with relevant
    documents (None when no model is configured: no answer figures, no model call), remove
    the namespace, report."""
    requests = [
        RetrievalQuery(query=s.query, domains=s.domains, top_k=top_k, namespace=namespace)
        for s in suite.samples
    ]
    try:
        started = time.perf_counter()
        chunks = await seed(ingestion, suite, namespace, progress)
        seed_ms = (time.perf_counter() - started) * 1e3
        results = await ask_every_variant(
            retrieval,
            requests,
            variants,
            None if progress is None else lambda done, total: progress("ask", done, total),
        )
        given = {} if answers is None else await answer_samples(answers, suite, requests, progress)
    finally:
        await library.delete_namespace(namespace)
    graded = {
        name: [
            grade(sample, best_per_document(result.matches), result.timings.total_ms)
            for sample, result in zip(suite.samples, variant_results, strict=True)
        ]
        for name, variant_results in results.items()
    }
    default_rows = [
        row.model_copy(update={"answer": given.get(row.id)}) for row in graded[DEFAULT_VARIANT]
    ]
    report = summarise(suite, namespace, top_k, chunks, seed_ms, default_rows)
    ablation = {
        name: variant_figures(variants[name], rows, results[name]) for name, rows in graded.items()
    }
    precision, recall = context_figures(suite, results[DEFAULT_VARIANT], context_tokens)
    return report.model_copy(
        update={
            "ablation": ablation,
            "context_precision": precision,
            "context_recall": recall,
            **({} if answers is None else answer_figures(list(given.values()))),
        }
    )


async def answer_samples(
    answers: AnswerService,
    suite: GoldenSuite,
    requests: Sequence[RetrievalQuery],
    progress: Progress | None,
) -> dict[str, SampleAnswer]:
    """The answer to each sample with relevant documents, by sample id, one at a time; a
    sample the model fails on gets an unanswered row naming the error."""
    asked = [
        (sample, request)
        for sample, request in zip(suite.samples, requests, strict=True)
        if not sample.is_negative
    ]
    given: dict[str, SampleAnswer] = {}
    for done, (sample, request) in enumerate(asked, start=1):
        try:
            given[sample.id] = SampleAnswer.of(await answers.answer(request), sample.relevant)
        except RetrievalError as error:
            log.warning("golden.answer_failed", sample=sample.id, error=str(error))
            given[sample.id] = SampleAnswer(answered=False, error=str(error))
        if progress is not None:
            progress("answer", done, len(asked))
    return given
