"""What ``GetStats`` and ``retrieval stats`` report: the size and the health of the collection.

``collect`` audits every namespace (``retrieval.service.ingestion.consistency.audit``): it lists
every id the vector index, the keyword index, the chunk texts and the ledger hold, so its cost grows
with the number of chunks. The health service calls ``reachability`` instead: one count from
each store under a short timeout.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pydantic import Field

from retrieval.domain.collection_health import (
    Footprint,
    HealthStatus,
    Orphans,
    Verdict,
    namespace_verdict,
    overall,
    texts_outside_namespaces,
    unreachable,
)
from retrieval.domain.models import Frozen
from retrieval.domain.vectors import IndexStats
from retrieval.errors import BackendError, NamespaceNotFoundError
from retrieval.ports import ChunkRepository, Embedder, KeywordIndex, VectorIndex
from retrieval.ports.document_ledger import DocumentLedger
from retrieval.ports.store_footprint import StoreFootprint
from retrieval.service.ingestion.chunk_graph import ChunkGraph
from retrieval.service.ingestion.consistency import ChunkStores, NamespaceAudit, audit


class NamespaceSummary(Frozen):
    """Size of one namespace in both stores."""

    namespace: str = Field(description="Namespace name.")
    vector_count: int = Field(ge=0, description="Vectors in the index.")
    chunk_count: int = Field(ge=0, description="Chunk texts in the chunk repository.")


class NamespaceHealth(Frozen):
    """Size of one namespace, and what its audit found."""

    namespace: str = Field(description="Namespace name.")
    status: HealthStatus = Field(description="Green, yellow (orphans found) or red.")
    reasons: tuple[str, ...] = Field(description="Why it is not green; empty when green.")
    vector_count: int = Field(ge=0, description="Vectors in the index.")
    chunk_count: int | None = Field(
        ge=0, description="Chunk texts in the chunk repository; None when the audit failed."
    )
    orphans: Orphans | None = Field(
        description="What the audit found out of place; None when it failed."
    )
    entity_count: int | None = Field(
        default=None,
        ge=0,
        description="Distinct entities its graph links; None when no graph is kept or the "
        "audit failed.",
    )


class CollectionStats(Frozen):
    """Size, shape and health of the knowledge base."""

    status: HealthStatus = Field(description="The worst status of any namespace or store.")
    reasons: tuple[str, ...] = Field(description="Why it is not green; empty when green.")
    embedding_model: str = Field(description="Model that embeds queries and passages.")
    dimension: int | None = Field(description="Vector dimension, unknown until the first write.")
    total_vector_count: int | None = Field(
        ge=0,
        description="Vectors across all namespaces (the reported ones, for a caller limited to "
        "some); None when the index did not answer.",
    )
    total_chunk_count: int | None = Field(
        ge=0,
        description="Chunk texts across all namespaces (the reported ones, for a caller limited "
        "to some); None when they could not be read.",
    )
    namespaces: tuple[NamespaceHealth, ...] = Field(description="Per namespace, by name.")
    footprints: tuple[Footprint, ...] = Field(
        description="Disk and memory of each embedded store; empty when none is embedded, or "
        "for a caller limited to some namespaces."
    )


AUDIT_NAMES = {"stale_chunks": "stale", "pending_documents": "pending"}
"""The audit's own name of each kind of orphan it names otherwise."""


def orphans_of(result: NamespaceAudit) -> Orphans:
    """The ids the audit found out of place, counted by kind."""
    return Orphans(
        **{kind: len(getattr(result, AUDIT_NAMES.get(kind, kind))) for kind in Orphans.model_fields}
    )


@dataclass(eq=False)
class StatsService:
    """Reads the size and health of the knowledge base from every store; writes nothing."""

    index: VectorIndex
    keywords: KeywordIndex
    chunks: ChunkRepository
    ledger: DocumentLedger
    embedder: Embedder
    footprints: Sequence[StoreFootprint]
    probe_timeout_s: float
    graph: ChunkGraph | None = None
    _stores: ChunkStores = field(init=False)

    def __post_init__(self) -> None:
        self._stores = ChunkStores(self.index, self.keywords, self.chunks, self.graph)

    async def probe(self) -> None:
        """Raises unless both stores answer."""
        await self._sizes()

    async def reachability(self) -> Verdict:
        """Red when a store does not answer ``probe`` within the probe timeout, else green:
        here green only means that both stores answer (orphans are not looked for)."""
        try:
            await self._bounded_sizes()
        except (BackendError, TimeoutError) as error:
            return unreachable("stores", self._describe(error))
        return Verdict(status=HealthStatus.GREEN, reasons=())

    async def namespace(self, namespace: str) -> NamespaceSummary:
        """Both counts of one namespace, even one holding texts and no vectors."""
        stats = await self._stores.index.stats()
        held = stats.namespaces.get(namespace)
        return NamespaceSummary(
            namespace=namespace,
            vector_count=0 if held is None else held.vector_count,
            chunk_count=await self._stores.texts.count(namespace),
        )

    async def existing(self, namespace: str) -> NamespaceSummary:
        """``namespace``'s counts; raises ``NamespaceNotFoundError`` when it holds neither
        vectors nor chunk texts."""
        held = await self.namespace(namespace)
        if not held.vector_count and not held.chunk_count:
            raise NamespaceNotFoundError(namespace)
        return held

    async def collect(self, visible: Callable[[str], bool] | None = None) -> CollectionStats:
        """Sizes, footprints and the audit of every namespace the vector index or the ledger
        holds.

        With ``visible``, only the namespaces it accepts are audited and reported: the totals
        are then the sums of theirs, the status is theirs and the stores', and no footprint
        is given (a store's size would tell the size of the other namespaces).
        """
        whole = visible is None
        footprints = (
            tuple(await asyncio.gather(*(s.footprint() for s in self.footprints))) if whole else ()
        )
        try:
            stats, total_texts = await self._bounded_sizes()
            found = await self._namespaces(stats)
        except (BackendError, TimeoutError) as error:
            verdict = unreachable("stores", self._describe(error))
            return CollectionStats(
                status=verdict.status,
                reasons=verdict.reasons,
                embedding_model=self.embedder.model,
                dimension=None,
                total_vector_count=None,
                total_chunk_count=None,
                namespaces=(),
                footprints=footprints,
            )
        held = {
            name: vector_count
            for name, vector_count in found.items()
            if visible is None or visible(name)
        }
        namespaces = [await self._audited(name, count) for name, count in sorted(held.items())]
        verdicts = [Verdict(status=ns.status, reasons=ns.reasons) for ns in namespaces]
        counted = [ns.chunk_count for ns in namespaces if ns.chunk_count is not None]
        all_counted = len(counted) == len(namespaces)
        total_vectors: int | None = stats.total_vector_count
        total_chunks: int | None = total_texts
        if whole and all_counted:
            verdicts.append(texts_outside_namespaces(total_texts, sum(counted)))
        elif not whole:
            total_vectors, total_chunks = sum(held.values()), sum(counted) if all_counted else None
        verdict = overall(verdicts)
        return CollectionStats(
            status=verdict.status,
            reasons=verdict.reasons,
            embedding_model=self.embedder.model,
            dimension=stats.dimension,
            total_vector_count=total_vectors,
            total_chunk_count=total_chunks,
            namespaces=tuple(namespaces),
            footprints=footprints,
        )

    async def _namespaces(self, stats: IndexStats) -> dict[str, int]:
        """The vector count of every namespace the index or the ledger holds: a write cut
        short before its first vector leaves its namespace in the ledger alone."""
        held = {name: namespace.vector_count for name, namespace in stats.namespaces.items()}
        for name in await self.ledger.namespaces():
            held.setdefault(name, 0)
        return held

    async def _audited(self, namespace: str, vector_count: int) -> NamespaceHealth:
        graph = self._stores.graph
        entity_count = None
        try:
            result = await audit(self._stores, self.ledger, namespace)
            if graph is not None:
                entity_count = await graph.store.entity_count(namespace)
        except BackendError as error:
            verdict = unreachable(f"namespace {namespace}", str(error))
            chunk_count, orphans = None, None
        else:
            chunk_count, orphans = len(result.texts), orphans_of(result)
            verdict = namespace_verdict(namespace, orphans)
        return NamespaceHealth(
            namespace=namespace,
            status=verdict.status,
            reasons=verdict.reasons,
            vector_count=vector_count,
            chunk_count=chunk_count,
            orphans=orphans,
            entity_count=entity_count,
        )

    async def _sizes(self) -> tuple[IndexStats, int]:
        return await self._stores.index.stats(), await self._stores.texts.count()

    async def _bounded_sizes(self) -> tuple[IndexStats, int]:
        return await asyncio.wait_for(self._sizes(), self.probe_timeout_s)

    def _describe(self, error: BaseException) -> str:
        if isinstance(error, TimeoutError) and not str(error):
            return f"no answer within {self.probe_timeout_s:g} s"
        return str(error)
