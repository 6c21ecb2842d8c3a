"""What identifies a stored chunk: everything stored with it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from retrieval.domain.keywords import KeywordRecord
from retrieval.domain.models import RagChunk, RagDocument, RetrievalQuery
from retrieval.domain.provenance import (
    FILE_TYPE_FIELD,
    PROVENANCE_FIELDS,
    SECTION_FIELD,
    SOURCE_FIELD,
    SOURCE_PREFIXES_FIELD,
    source_prefixes,
)
from retrieval.domain.vectors import VectorRecord

RESERVED_METADATA = frozenset({"document_id", "title", "domain", "position", *PROVENANCE_FIELDS})


def chunk_id(
    document: RagDocument, position: int, content: str, model: str, pages: Sequence[int] = ()
) -> str:
    """``<document>#<position>-<digest>``: the digest covers the text, the title, the domain,
    the metadata, the embedding model and, for a document with a source, the source, its
    file type and the pages the chunk spans, so a change to any of them is a new chunk."""
    fields: list[object] = [content, document.title, document.domain, document.metadata, model]
    if document.source is not None:
        fields.append([document.source.uri, document.source.file_type, list(pages)])
    payload = json.dumps(fields, sort_keys=True, ensure_ascii=False)
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
    metadata = {
        **chunk.metadata,
        "document_id": chunk.document_id,
        "title": chunk.title,
        "domain": chunk.domain,
        "position": chunk.position,
    }
    if chunk.source is not None:
        metadata[SOURCE_FIELD] = chunk.source
        metadata[SOURCE_PREFIXES_FIELD] = source_prefixes(chunk.source)
    if chunk.file_type is not None:
        metadata[FILE_TYPE_FIELD] = chunk.file_type
    if chunk.section:
        metadata[SECTION_FIELD] = chunk.section
    return metadata


def query_filter(query: RetrievalQuery) -> dict | None:
    """The metadata filter of a query's domains, source prefix and section; None if none."""
    conditions: dict = {}
    if query.domains:
        conditions["domain"] = {"$in": sorted(set(query.domains))}
    if query.source_prefix is not None:
        conditions[SOURCE_PREFIXES_FIELD] = query.source_prefix
    if query.section is not None:
        conditions[SECTION_FIELD] = query.section
    return conditions or None


def keyword_record(chunk: RagChunk) -> KeywordRecord:
    """A chunk's keyword entry: its text headed by the document title (chunks cut by
    ``chunk_markdown`` already start with it), with its vector's metadata."""
    text = chunk.content
    if not text.startswith(chunk.title):
        text = f"{chunk.title}\n{text}"
    return KeywordRecord(id=chunk.chunk_id, text=text, metadata=vector_metadata(chunk))
