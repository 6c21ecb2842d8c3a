"""What every ChunkRepository must do. Subclass and provide a ``repository`` fixture (empty)."""

from __future__ import annotations

import pytest

from retrieval.domain.models import RagChunk
from retrieval.ports.chunk_repository import ChunkRepository

NS = "contract"
MANY = 1_100
"""More chunks than one page or batch of any adapter here (100 in memory, 500 on MongoDB)."""


async def pages(repository: ChunkRepository, namespace: str = NS) -> list:
    return [page async for page in repository.list_chunks(namespace)]


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

    async def test_list_chunks_of_a_namespace_in_order(self, seeded: ChunkRepository) -> None:
        assert await pages(seeded) == [
            [("doc-1#0", "doc-1"), ("doc-1#1", "doc-1"), ("doc-2#0", "doc-2")]
        ]
        assert await pages(seeded, "other") == [[("doc-1#0", "doc-1")]]

    async def test_list_chunks_of_an_unknown_namespace_is_empty(
        self, seeded: ChunkRepository
    ) -> None:
        assert await pages(seeded, "never-written") == []

    async def test_a_large_namespace_is_listed_in_pages_and_deleted_whole(
        self, repository: ChunkRepository
    ) -> None:
        written = [chunk(f"doc-{n % 7}#{n:05d}", document_id=f"doc-{n % 7}") for n in range(MANY)]
        await repository.upsert_many([*written, chunk("doc-0#00000", namespace="other")])
        listed = await pages(repository)
        assert len(listed) > 1
        assert all(listed)
        assert [pair for page in listed for pair in page] == sorted(
            (c.chunk_id, c.document_id) for c in written
        )
        assert await repository.delete_namespace(NS) == MANY
        assert await pages(repository) == []
        assert await repository.count() == 1

    async def test_deleting_listed_chunks_between_pages_skips_nothing(
        self, repository: ChunkRepository
    ) -> None:
        written = [chunk(f"doc-1#{n:05d}") for n in range(MANY)]
        await repository.upsert_many(written)
        listed: list[tuple[str, str]] = []
        async for page in repository.list_chunks(NS):
            listed.extend(page)
            await repository.delete_chunks([chunk_id for chunk_id, _ in page], NS)
        assert listed == [(c.chunk_id, c.document_id) for c in written]
        assert await repository.count(NS) == 0

    async def test_large_deletes_of_chunks_and_documents(self, repository: ChunkRepository) -> None:
        kept = {f"doc-1#{n:05d}" for n in range(MANY)}
        doomed = [f"doc-2#{n:05d}" for n in range(MANY)]
        await repository.upsert_many(
            [chunk(chunk_id) for chunk_id in kept]
            + [chunk(chunk_id, document_id="doc-2") for chunk_id in doomed]
        )
        assert await repository.delete_chunks([*doomed, *doomed[:10], "missing"], NS) == MANY
        assert await repository.chunk_ids("doc-2", namespace=NS) == set()
        assert await repository.chunk_ids("doc-1", namespace=NS) == kept
        assert await repository.delete_document("doc-1", namespace=NS) == MANY
        assert await repository.count(NS) == 0
