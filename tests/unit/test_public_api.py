import retrieval

PUBLIC = {
    "Application", "DocumentOutcome", "IngestionService", "KnowledgeDomain", "Outcome",
    "RagChunk", "RagDocument", "RetrievalMatch", "RetrievalQuery", "RetrievalResult",
    "RetrievalService", "Settings", "StageTimings", "running",
}  # fmt: skip


def test_public_surface_is_deliberate() -> None:
    assert set(retrieval.__all__) == PUBLIC
    assert all(getattr(retrieval, name) is not None for name in PUBLIC)
