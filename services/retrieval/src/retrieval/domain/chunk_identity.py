"""What identifies a stored chunk: everything stored with it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from retrieval.domain.keywords import KeywordRecord
from retrieval.domain.models import RagChunk, RagDocument
from retrieval.domain.vectors import VectorRecord

RESERVED_METADATA = frozenset({"document_id", "title", "domain", "position"})


def chunk_id(document: RagDocument, position: int, content: str, model: str) -> str:
    """``<document>#<position>-<digest>``: the digest covers the text, the title, the domain,
    the metadata and the embedding model, so a change to any of them is a new chunk."""
    payload = json.dumps(
        [content, document.title, document.domain, document.metadata, model],
        sort_keys=True,
        ensure_ascii=False,
    )
    digest = hashlib.sha256(payload.encode()).hexdigest()[:16]
    return f"{document.document_id}#{position:04d}-{digest}"


def document_of(chunk_id: str) -> str:
    """The document of a chunk id (document ids hold no ``#``)."""
    return chunk_id.rsplit("#", 1)[0]


def vector_record(chunk: RagChunk, vector: Sequence[float]) -> VectorRecord:
    return VectorRecord(
        id=chunk.chunk_id, values=tuple(float(x) for x in vector), metadata=vector_metadata(chunk)
    )


def vector_metadata(chunk: RagChunk) -> dict:
    """The filterable metadata of a chunk's vector: the document's, plus where it came from."""
    return {
        **chunk.metadata,
        "document_id": chunk.document_id,
        "title": chunk.title,
        "domain": chunk.domain,
        "position": chunk.position,
    }


def keyword_record(chunk: RagChunk) -> KeywordRecord:
    """A chunk's keyword entry: its text headed by the document title (chunks cut by
    ``chunk_markdown`` already start with it), with its vector's metadata."""
    text = chunk.content
    if not text.startswith(chunk.title):
        text = f"{chunk.title}\n{text}"
    return KeywordRecord(id=chunk.chunk_id, text=text, metadata=vector_metadata(chunk))
