"""Validation of a namespace as it is served: its questions asked the way agents ask them."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import structlog

from retrieval.domain.allowed_domains import check_domains
from retrieval.domain.models import DENSE, RetrievalQuery
from retrieval.domain.validation import CaseSource, ValidationCase, ValidationRequest, smoke_cases
from retrieval.domain.validation_grading import grade, top_cosine
from retrieval.domain.validation_report import (
    NamespaceSurvey,
    QueryOutcome,
    ValidationReport,
    summarise,
)
from retrieval.errors import InvalidRequestError, RetrievalError
from retrieval.ports import ChunkRepository
from retrieval.service.retrieval.pipeline import SearchPlan
from retrieval.service.retrieval.retrieval_service import RetrievalService
from retrieval.service.stats import StatsService

log = structlog.get_logger("retrieval")


@dataclass(frozen=True, eq=False)
class ValidationService:
    """Asks a namespace its cases (or, without cases, each document's title) through
    ``retrieval`` with the served settings (``plan``, the switches it searches with), grades
    every answer, and reads the namespace's counts and chunk metadata; writes nothing. A
    request that sets no success criterion must meet ``success_rate``."""

    retrieval: RetrievalService
    stats: StatsService
    chunks: ChunkRepository
    plan: SearchPlan
    allowed_domains: Collection[str]
    success_rate: float

    async def validate(self, request: ValidationRequest) -> ValidationReport:
        """Ask every case, one at a time, with ``top_k`` and no confidence threshold; a case
        whose retrieval raises fails with the error as its reason.

        Raises ``NamespaceNotFoundError`` when the namespace holds neither vectors nor chunk
        texts, ``InvalidRequestError`` for a case naming a domain outside a set
        ``allowed_domains`` (``cases.<i>.domains``) or a namespace written by another
        embedding model.
        """
        self._check_domains(request.cases)
        namespace = request.namespace
        held = await self.stats.existing(namespace)
        survey = await self._survey(namespace)
        cases = request.cases or smoke_cases(survey.titles)
        outcomes = [
            await self._ask(case, position, namespace, request.top_k)
            for position, case in enumerate(cases)
        ]
        criterion = (
            self.success_rate if request.success_criterion is None else request.success_criterion
        )
        report = summarise(
            namespace,
            CaseSource.CASES if request.cases else CaseSource.SMOKE,
            outcomes,
            criterion=criterion,
            top_k=request.top_k,
            vector_count=held.vector_count,
            chunk_count=held.chunk_count,
            completeness=survey.metadata_completeness(request.expected_metadata),
        )
        log.info(
            "validate.done",
            namespace=namespace,
            source=report.source.value,
            queries=report.total_queries,
            passed_queries=report.passed_queries,
            success_rate=report.success_rate,
            passed=report.passed,
        )
        return report

    def _check_domains(self, cases: Sequence[ValidationCase]) -> None:
        for position, case in enumerate(cases):
            try:
                check_domains(case.domains, self.allowed_domains)
            except InvalidRequestError as error:
                raise InvalidRequestError(
                    error.reason, field=f"cases.{position}.domains"
                ) from error

    async def _survey(self, namespace: str) -> NamespaceSurvey:
        """Every chunk of the namespace, read once, a page of ids at a time."""
        survey = NamespaceSurvey()
        async for page in self.chunks.list_chunks(namespace):
            found = await self.chunks.get_many([chunk_id for chunk_id, _ in page], namespace)
            survey.add(found.values())
        return survey

    async def _ask(
        self, case: ValidationCase, position: int, namespace: str, top_k: int
    ) -> QueryOutcome:
        query = RetrievalQuery(
            query=case.query, domains=case.domains, top_k=top_k, namespace=namespace
        )
        try:
            result = await self.retrieval.retrieve_query(query)
        except InvalidRequestError:
            raise
        except RetrievalError as error:
            failed = QueryOutcome.of(case, position, [f"retrieval failed: {error}"], None)
            log.warning(
                "validate.query_failed", namespace=namespace, case=failed.id, error=str(error)
            )
            return failed
        reasons = grade(
            case,
            result.matches,
            top_k,
            degraded=result.degraded,
            cosines_expected=self.plan.uses_dense and DENSE not in result.degraded,
        )
        return QueryOutcome.of(case, position, reasons, top_cosine(result.matches))
