"""What every ChunkRepository must do. Subclass and provide a ``repository`` fixture (empty)."""

from __future__ import annotations

import pytest

from retrieval.domain.models import RagChunk
from retrieval.ports.chunk_repository import ChunkRepository

NS = "contract"


def chunk(chunk_id: str, document_id: str = "doc-1", namespace: str = NS, **extra) -> RagChunk:
    fields = {
        "title": "Blister blight",
        "domain": "plant_diseases",
        "position": 0,
        "content": f"text of {chunk_id}",
        "metadata": {"region": "assam"},
    } | extra
    return RagChunk(chunk_id=chunk_id, document_id=document_id, namespace=namespace, **fields)


class ChunkRepositoryContract:
    @pytest.fixture
    async def seeded(self, repository: ChunkRepository) -> ChunkRepository:
        chunks = [
            chunk("doc-1#0", position=0),
            chunk("doc-1#1", position=1, metadata={"tags": ["a", "b"], "year": 2024}),
            chunk("doc-2#0", document_id="doc-2"),
            chunk("doc-1#0", namespace="other", content="other namespace"),
        ]
        assert await repository.upsert_many(chunks) == 4
        return repository

    async def test_get_many_returns_found_chunks_by_id(self, seeded: ChunkRepository) -> None:
        found = await seeded.get_many(["doc-1#1", "doc-2#0", "missing"], namespace=NS)
        assert set(found) == {"doc-1#1", "doc-2#0"}
        assert found["doc-1#1"] == chunk(
            "doc-1#1", position=1, metadata={"tags": ["a", "b"], "year": 2024}
        )

    async def test_get_many_of_nothing_is_empty(self, seeded: ChunkRepository) -> None:
        assert await seeded.get_many([], namespace=NS) == {}

    async def test_namespaces_are_isolated(self, seeded: ChunkRepository) -> None:
        other = await seeded.get_by_id("doc-1#0", namespace="other")
        assert other is not None
        assert other.content == "other namespace"
        own = await seeded.get_by_id("doc-1#0", namespace=NS)
        assert own is not None
        assert own.content == "text of doc-1#0"

    async def test_get_by_id_of_missing_chunk_is_none(self, seeded: ChunkRepository) -> None:
        assert await seeded.get_by_id("missing", namespace=NS) is None

    async def test_upsert_replaces_a_chunk(self, seeded: ChunkRepository) -> None:
        await seeded.upsert_many([chunk("doc-2#0", document_id="doc-2", content="new text")])
        replaced = await seeded.get_by_id("doc-2#0", namespace=NS)
        assert replaced is not None
        assert replaced.content == "new text"
        assert await seeded.count(NS) == 3

    async def test_chunk_ids_of_a_document(self, seeded: ChunkRepository) -> None:
        assert await seeded.chunk_ids("doc-1", namespace=NS) == {"doc-1#0", "doc-1#1"}
        assert await seeded.chunk_ids("unknown", namespace=NS) == set()

    async def test_delete_chunks(self, seeded: ChunkRepository) -> None:
        assert await seeded.delete_chunks(["doc-1#0", "missing"], namespace=NS) == 1
        assert await seeded.chunk_ids("doc-1", namespace=NS) == {"doc-1#1"}
        assert await seeded.count("other") == 1

    async def test_delete_document(self, seeded: ChunkRepository) -> None:
        assert await seeded.delete_document("doc-1", namespace=NS) == 2
        assert await seeded.count(NS) == 1
        assert await seeded.count("other") == 1

    async def test_delete_namespace(self, seeded: ChunkRepository) -> None:
        assert await seeded.delete_namespace(NS) == 3
        assert await seeded.count(NS) == 0
        assert await seeded.count() == 1
