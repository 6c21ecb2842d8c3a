"""Documents cut into chunks, once per request: the checks and the write share the cut."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from retrieval.domain.chunk_identity import chunk_id
from retrieval.domain.chunking import chunk_markdown
from retrieval.domain.graph import GraphRecord
from retrieval.domain.ledger import fingerprint
from retrieval.domain.models import RagChunk, RagDocument
from retrieval.ports.embedder import Matrix


@dataclass(frozen=True)
class ChunkingPolicy:
    """How documents are cut into the chunks a model embeds (the model names each chunk)."""

    max_words: int = 180
    overlap_words: int = 30

    def split(self, document: RagDocument, namespace: str, model: str) -> list[RagChunk]:
        pieces = chunk_markdown(
            document.title,
            document.content,
            max_words=self.max_words,
            overlap_words=self.overlap_words,
        )
        return [
            chunk(document, namespace, model, position, piece.content, piece.section, piece.pages)
            for position, piece in enumerate(pieces)
        ]


def whole(document: RagDocument, namespace: str, model: str) -> list[RagChunk]:
    """The document as one chunk; none when it holds only whitespace."""
    if not document.content.strip():
        return []
    return [chunk(document, namespace, model, 0, document.content)]


def chunk(
    document: RagDocument,
    namespace: str,
    model: str,
    position: int,
    text: str,
    section: str = "",
    pages: tuple[int, ...] = (),
) -> RagChunk:
    source = document.source
    return RagChunk(
        chunk_id=chunk_id(document, position, text, model, pages),
        document_id=document.document_id,
        namespace=namespace,
        title=document.title,
        domain=document.domain,
        position=position,
        content=text,
        metadata=document.metadata,
        source=source.uri if source is not None else None,
        file_type=source.file_type if source is not None else None,
        section=section,
        pages=pages,
    )


@dataclass
class Prepared:
    """A document cut into chunks, with their vectors and graph records when the caller
    brought them (a restore)."""

    document: RagDocument
    chunks: list[RagChunk]
    vectors: Matrix | None = None
    graph: list[GraphRecord] | None = None

    @property
    def document_id(self) -> str:
        return self.document.document_id

    @property
    def source(self) -> str | None:
        return self.document.source.uri if self.document.source is not None else None

    @cached_property
    def fingerprint(self) -> str:
        return fingerprint(chunk.chunk_id for chunk in self.chunks)


def passages_to_embed(items: Sequence[Prepared]) -> int:
    """Chunks of these documents to embed: those of documents given without vectors."""
    return sum(len(item.chunks) for item in items if item.vectors is None)
