"""What ``GetStats`` reports: vectors and chunk texts per namespace."""

from __future__ import annotations

from pydantic import Field

from retrieval.domain.models import Frozen
from retrieval.ports import ChunkRepository, VectorIndex


class NamespaceSummary(Frozen):
    """Size of one namespace in both stores."""

    namespace: str = Field(description="Namespace name.")
    vector_count: int = Field(ge=0, description="Vectors in the index.")
    chunk_count: int = Field(ge=0, description="Chunk texts in the chunk repository.")


class ServiceStats(Frozen):
    """Size and shape of the knowledge base."""

    dimension: int | None = Field(description="Vector dimension, unknown until the first write.")
    total_vector_count: int = Field(ge=0, description="Vectors across all namespaces.")
    namespaces: tuple[NamespaceSummary, ...] = Field(description="Per namespace, by name.")


class StatsService:
    """Reads the size of the knowledge base from both stores; writes nothing."""

    def __init__(self, index: VectorIndex, chunks: ChunkRepository) -> None:
        self._index = index
        self._chunks = chunks

    async def probe(self) -> None:
        """Raises unless both stores answer."""
        await self._chunks.count()
        await self._index.stats()

    async def namespace(self, namespace: str) -> NamespaceSummary:
        """Both counts of one namespace, even one holding texts and no vectors."""
        stats = await self._index.stats()
        held = stats.namespaces.get(namespace)
        return NamespaceSummary(
            namespace=namespace,
            vector_count=0 if held is None else held.vector_count,
            chunk_count=await self._chunks.count(namespace),
        )

    async def collect(self) -> ServiceStats:
        stats = await self._index.stats()
        namespaces = [
            NamespaceSummary(
                namespace=name,
                vector_count=namespace.vector_count,
                chunk_count=await self._chunks.count(name),
            )
            for name, namespace in sorted(stats.namespaces.items())
        ]
        return ServiceStats(
            dimension=stats.dimension,
            total_vector_count=stats.total_vector_count,
            namespaces=tuple(namespaces),
        )
