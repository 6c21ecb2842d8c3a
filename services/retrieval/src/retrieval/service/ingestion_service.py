"""Documents in, searchable chunks out, with nothing half-written left behind.

Write order: chunk texts first, vectors second, stale vectors third, stale texts
last. A vector therefore never points to a missing text. If a write fails, the new
texts are removed again and the previous version of the document stays whole.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from enum import StrEnum

import structlog

from retrieval.domain.chunking import chunk_markdown
from retrieval.domain.models import Frozen, RagChunk, RagDocument, check_slug
from retrieval.domain.vectors import VectorRecord
from retrieval.errors import IngestionError, InvalidRequestError, RetrievalError
from retrieval.ports import ChunkRepository, Embedder, VectorIndex
from retrieval.ports.embedder import Matrix
from retrieval.service.retrieval_service import check_domains
from retrieval.service.timing import StageClock

log = structlog.get_logger("ingestion")

RESERVED_METADATA = frozenset({"document_id", "title", "domain", "position"})


class Outcome(StrEnum):
    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    FAILED = "failed"


class DocumentOutcome(Frozen):
    document_id: str
    outcome: Outcome
    chunks: int
    error: str | None = None


@dataclass(frozen=True)
class ChunkingPolicy:
    max_words: int = 180
    overlap_words: int = 30


@dataclass
class Plan:
    document: RagDocument
    chunks: list[RagChunk]
    existing: set[str]

    @property
    def ids(self) -> set[str]:
        return {chunk.chunk_id for chunk in self.chunks}

    @property
    def stale(self) -> set[str]:
        return self.existing - self.ids

    @property
    def outcome(self) -> Outcome:
        if not self.existing:
            return Outcome.CREATED
        return Outcome.UNCHANGED if self.existing == self.ids else Outcome.UPDATED


def chunk_id(document_id: str, position: int, content: str) -> str:
    digest = hashlib.sha256(content.encode()).hexdigest()[:16]
    return f"{document_id}#{position:04d}-{digest}"


def vector_metadata(chunk: RagChunk) -> dict:
    return {
        **chunk.metadata,
        "document_id": chunk.document_id,
        "title": chunk.title,
        "domain": chunk.domain,
        "position": chunk.position,
    }


class IngestionService:
    def __init__(
        self,
        embedder: Embedder,
        index: VectorIndex,
        chunks: ChunkRepository,
        allowed_domains: Collection[str],
        default_namespace: str,
        policy: ChunkingPolicy,
        documents_per_write: int = 16,
    ) -> None:
        self._embedder = embedder
        self._index = index
        self._chunks = chunks
        self._allowed_domains = frozenset(allowed_domains)
        self._default_namespace = default_namespace
        self._policy = policy
        self._documents_per_write = documents_per_write

    def split(self, document: RagDocument, namespace: str) -> list[RagChunk]:
        pieces = chunk_markdown(
            document.title,
            document.content,
            max_words=self._policy.max_words,
            overlap_words=self._policy.overlap_words,
        )
        return [
            RagChunk(
                chunk_id=chunk_id(document.document_id, position, piece.content),
                document_id=document.document_id,
                namespace=namespace,
                title=document.title,
                domain=document.domain,
                position=position,
                content=piece.content,
                metadata=document.metadata,
            )
            for position, piece in enumerate(pieces)
        ]

    async def ingest(
        self,
        documents: Sequence[RagDocument],
        namespace: str | None = None,
        on_progress: Callable[[int], None] | None = None,
    ) -> list[DocumentOutcome]:
        """Chunk, embed and store documents; unchanged ones cost one lookup and write nothing."""
        namespace = check_slug(namespace or self._default_namespace, "namespace")
        self._validate(documents)
        outcomes: list[DocumentOutcome] = []
        step = self._documents_per_write
        for start in range(0, len(documents), step):
            group = documents[start : start + step]
            outcomes.extend(await self._ingest_group(group, namespace))
            if on_progress is not None:
                on_progress(len(group))
        return outcomes

    def _validate(self, documents: Sequence[RagDocument]) -> None:
        check_domains([document.domain for document in documents], self._allowed_domains)
        seen: set[str] = set()
        for document in documents:
            if document.document_id in seen:
                raise InvalidRequestError(
                    f"document {document.document_id!r} appears twice", field="document_id"
                )
            seen.add(document.document_id)
            clash = RESERVED_METADATA & document.metadata.keys()
            if clash:
                raise InvalidRequestError(
                    f"metadata keys {sorted(clash)} are reserved", field="metadata"
                )

    async def _ingest_group(
        self, documents: Sequence[RagDocument], namespace: str
    ) -> list[DocumentOutcome]:
        clock = StageClock()
        plans = [
            Plan(
                doc,
                self.split(doc, namespace),
                await self._chunks.chunk_ids(doc.document_id, namespace),
            )
            for doc in documents
        ]
        changed = [plan for plan in plans if plan.outcome != Outcome.UNCHANGED]
        try:
            await self._write(changed, namespace, clock)
        except RetrievalError as error:
            log.error("ingest.failed", namespace=namespace, error=str(error))
            await self._roll_back(changed, namespace)
            return [
                DocumentOutcome(
                    document_id=plan.document.document_id,
                    outcome=Outcome.FAILED if plan in changed else Outcome.UNCHANGED,
                    chunks=len(plan.chunks),
                    error=str(error) if plan in changed else None,
                )
                for plan in plans
            ]
        log.info(
            "ingest.group",
            namespace=namespace,
            documents=len(plans),
            changed=len(changed),
            chunks=sum(len(plan.chunks) for plan in changed),
            **{f"{stage}_ms": round(ms, 2) for stage, ms in clock.stages.items()},
            total_ms=round(clock.elapsed_ms(), 2),
        )
        return [
            DocumentOutcome(
                document_id=plan.document.document_id, outcome=plan.outcome, chunks=len(plan.chunks)
            )
            for plan in plans
        ]

    async def _write(self, plans: Sequence[Plan], namespace: str, clock: StageClock) -> None:
        chunks = [chunk for plan in plans for chunk in plan.chunks]
        if not chunks:
            return
        with clock.stage("embed"):
            vectors = await self._embedder.embed_passages([chunk.content for chunk in chunks])
        with clock.stage("write"):
            await self.store(chunks, vectors, namespace)
        stale = sorted(set().union(*(plan.stale for plan in plans)))
        if stale:
            with clock.stage("remove_stale"):
                await self._index.delete(namespace=namespace, ids=stale)
                await self._chunks.delete_chunks(stale, namespace)

    async def store(self, chunks: Sequence[RagChunk], vectors: Matrix, namespace: str) -> None:
        """Write chunks already embedded, texts first and vectors second, as ``ingest`` does.

        For callers that bring their own vectors (benchmarks with precomputed embeddings).
        """
        records = [
            VectorRecord(
                id=chunk.chunk_id, values=tuple(vector.tolist()), metadata=vector_metadata(chunk)
            )
            for chunk, vector in zip(chunks, vectors, strict=True)
        ]
        await self._chunks.upsert_many(chunks)
        await self._index.upsert(records, namespace)

    async def _roll_back(self, plans: Sequence[Plan], namespace: str) -> None:
        fresh = sorted(
            chunk.chunk_id
            for plan in plans
            for chunk in plan.chunks
            if chunk.chunk_id not in plan.existing
        )
        if not fresh:
            return
        try:
            await self._index.delete(namespace=namespace, ids=fresh)
            await self._chunks.delete_chunks(fresh, namespace)
        except RetrievalError as error:
            raise IngestionError(
                f"ingestion failed and {len(fresh)} new chunks could not be removed: {error}"
            ) from error

    async def delete_document(self, document_id: str, namespace: str | None = None) -> int:
        """Remove a document's vectors, then its texts; returns how many chunks it had."""
        document_id = check_slug(document_id, "document_id")
        namespace = check_slug(namespace or self._default_namespace, "namespace")
        ids = sorted(await self._chunks.chunk_ids(document_id, namespace))
        if ids:
            await self._index.delete(namespace=namespace, ids=ids)
        return await self._chunks.delete_document(document_id, namespace)

    async def delete_namespace(self, namespace: str) -> int:
        """Remove every vector, then every text, of a namespace; returns the chunk count."""
        namespace = check_slug(namespace, "namespace")
        await self._index.delete(namespace=namespace, delete_all=True)
        return await self._chunks.delete_namespace(namespace)
