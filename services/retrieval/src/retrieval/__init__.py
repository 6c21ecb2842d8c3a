"""Retrieval for agents: find the knowledge an answer rests on.

In-process callers start the configured stores and call the services::

    async with running(Settings()) as app:
        result = await app.retrieval.retrieve("what causes blister blight?", ["plant_diseases"])
"""

from retrieval.container import Application, running
from retrieval.domain.collection_health import HealthStatus
from retrieval.domain.models import (
    KnowledgeDomain,
    RagChunk,
    RagDocument,
    RetrievalMatch,
    RetrievalQuery,
    RetrievalResult,
    StageTimings,
)
from retrieval.service.ingestion_service import DocumentOutcome, IngestionService, Outcome
from retrieval.service.reconciliation import ReconcileReport
from retrieval.service.retrieval_service import RetrievalService
from retrieval.service.stats import CollectionStats, StatsService
from retrieval.settings import Settings

__all__ = [
    "Application",
    "CollectionStats",
    "DocumentOutcome",
    "HealthStatus",
    "IngestionService",
    "KnowledgeDomain",
    "Outcome",
    "RagChunk",
    "RagDocument",
    "ReconcileReport",
    "RetrievalMatch",
    "RetrievalQuery",
    "RetrievalResult",
    "RetrievalService",
    "Settings",
    "StageTimings",
    "StatsService",
    "running",
]
