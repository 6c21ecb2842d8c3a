"""Retrieval for agents: find the knowledge an answer rests on.

In-process callers start the configured stores and ask the knowledge base (docs/python.md)::

    async with retrieval.connect() as kb:
        await kb.ingest(["docs/"], namespace="mine", domain="software_docs")
        result = await kb.retrieve("how do I rotate an API key?", namespace="mine")

The gRPC client (``retrieval.grpc.RetrievalClient``) has the same methods
(``KnowledgeBaseApi``), and ``connect_sync()`` gives either to code without an event loop.

The names below are imported on first use, so that importing a part of the package (the
command line, the settings) does not load the stores and the model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from retrieval.lazy_names import importer, listing

if TYPE_CHECKING:
    from retrieval.api import KnowledgeBase, backup, connect, connect_sync, restore
    from retrieval.client_api import KnowledgeBaseApi
    from retrieval.domain.answers import Answer, AnswerDelta, AnswerDone
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
    from retrieval.lifecycle import Application, running
    from retrieval.service.backup.backups import BackupReport, RestoreReport
    from retrieval.service.ingestion.ingestion_service import IngestionService
    from retrieval.service.ingestion.local_files import IngestReport, PathSync
    from retrieval.service.ingestion.outcomes import DocumentOutcome, Outcome
    from retrieval.service.ingestion.reconciliation import ReconcileReport
    from retrieval.service.retrieval.retrieval_service import RetrievalService
    from retrieval.service.stats import CollectionStats, StatsService
    from retrieval.settings import Settings
    from retrieval.sync_facade import SyncKnowledgeBase

MODULE_OF = {
    "connect": "retrieval.api",
    "connect_sync": "retrieval.api",
    "backup": "retrieval.api",
    "restore": "retrieval.api",
    "BackupReport": "retrieval.service.backup.backups",
    "RestoreReport": "retrieval.service.backup.backups",
    "KnowledgeBase": "retrieval.api",
    "KnowledgeBaseApi": "retrieval.client_api",
    "SyncKnowledgeBase": "retrieval.sync_facade",
    "Answer": "retrieval.domain.answers",
    "AnswerDelta": "retrieval.domain.answers",
    "AnswerDone": "retrieval.domain.answers",
    "IngestReport": "retrieval.service.ingestion.local_files",
    "PathSync": "retrieval.service.ingestion.local_files",
    "Application": "retrieval.lifecycle",
    "running": "retrieval.lifecycle",
    "HealthStatus": "retrieval.domain.collection_health",
    "KnowledgeDomain": "retrieval.domain.models",
    "RagChunk": "retrieval.domain.models",
    "RagDocument": "retrieval.domain.models",
    "RetrievalMatch": "retrieval.domain.models",
    "RetrievalQuery": "retrieval.domain.models",
    "RetrievalResult": "retrieval.domain.models",
    "StageTimings": "retrieval.domain.models",
    "DocumentOutcome": "retrieval.service.ingestion.outcomes",
    "IngestionService": "retrieval.service.ingestion.ingestion_service",
    "Outcome": "retrieval.service.ingestion.outcomes",
    "ReconcileReport": "retrieval.service.ingestion.reconciliation",
    "RetrievalService": "retrieval.service.retrieval.retrieval_service",
    "CollectionStats": "retrieval.service.stats",
    "StatsService": "retrieval.service.stats",
    "Settings": "retrieval.settings",
}

__all__ = [
    "Answer",
    "AnswerDelta",
    "AnswerDone",
    "Application",
    "BackupReport",
    "CollectionStats",
    "DocumentOutcome",
    "HealthStatus",
    "IngestReport",
    "IngestionService",
    "KnowledgeBase",
    "KnowledgeBaseApi",
    "KnowledgeDomain",
    "Outcome",
    "PathSync",
    "RagChunk",
    "RagDocument",
    "ReconcileReport",
    "RestoreReport",
    "RetrievalMatch",
    "RetrievalQuery",
    "RetrievalResult",
    "RetrievalService",
    "Settings",
    "StageTimings",
    "StatsService",
    "SyncKnowledgeBase",
    "backup",
    "connect",
    "connect_sync",
    "restore",
    "running",
]


__getattr__ = importer("retrieval", MODULE_OF, globals())
__dir__ = listing(globals())
