from dataclasses import fields

import retrieval

PUBLIC = {
    "Answer", "AnswerDelta", "AnswerDone", "Application", "BackupReport", "CollectionStats",
    "DocumentOutcome",
    "HealthStatus", "IngestReport", "IngestionService", "KnowledgeBase", "KnowledgeBaseApi",
    "KnowledgeDomain",
    "Outcome", "PathSync", "RagChunk", "RagDocument", "ReconcileReport", "RestoreReport",
    "RetrievalMatch",
    "RetrievalQuery", "RetrievalResult", "RetrievalService", "Settings", "StageTimings",
    "StatsService", "SyncKnowledgeBase", "backup", "connect", "connect_sync", "restore",
    "running",
}  # fmt: skip


def test_public_surface_is_deliberate() -> None:
    assert set(retrieval.__all__) == PUBLIC
    assert all(getattr(retrieval, name) is not None for name in PUBLIC)


def test_the_application_hands_out_services_never_stores() -> None:
    assert {field.name for field in fields(retrieval.Application)} == {
        "settings",
        "retrieval",
        "ingestion",
        "library",
        "sync",
        "repair",
        "local_files",
        "stats",
        "answers",
        "validation",
        "telemetry",
        "backups",
    }
