"""Every document of a request is checked before anything is embedded or written."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from retrieval.domain.allowed_domains import refusal, refused_domains
from retrieval.domain.chunk_identity import RESERVED_METADATA, vector_metadata
from retrieval.domain.metadata import MAX_METADATA_BYTES, MODEL_FIELD, json_size
from retrieval.domain.models import RagChunk, RagDocument
from retrieval.errors import InvalidRequestError


def problem(document: RagDocument, message: str, field: str) -> InvalidRequestError:
    return InvalidRequestError(f"document {document.document_id!r}: {message}", field=field)


def check_request(
    documents: Sequence[RagDocument],
    chunks: Sequence[Sequence[RagChunk]],
    *,
    allowed_domains: Collection[str],
    signature: str,
) -> None:
    """Raise ``InvalidRequestError`` naming the first bad document and its field; a domain
    is bad only outside a non-empty ``allowed_domains``."""
    check_unique(documents)
    for document, pieces in zip(documents, chunks, strict=True):
        check_document(document, pieces, allowed_domains=allowed_domains, signature=signature)


def check_unique(documents: Sequence[RagDocument]) -> None:
    """Raise ``InvalidRequestError`` naming the first document id given twice."""
    seen: set[str] = set()
    for document in documents:
        if document.document_id in seen:
            raise problem(document, "appears twice in the request", "document_id")
        seen.add(document.document_id)


def check_document(
    document: RagDocument,
    chunks: Sequence[RagChunk],
    *,
    allowed_domains: Collection[str],
    signature: str,
) -> None:
    refused = refused_domains([document.domain], allowed_domains)
    if refused:
        raise problem(document, refusal(refused, allowed_domains), "domain")
    clash = (RESERVED_METADATA | {MODEL_FIELD}) & document.metadata.keys()
    if clash:
        raise problem(document, f"metadata keys {sorted(clash)} are reserved", "metadata")
    for field, text in (("title", document.title), ("content", document.content)):
        if "\x00" in text:
            raise problem(document, "contains a NUL byte", field)
    if not chunks:
        raise problem(document, "has no text to index (only whitespace or headings)", "content")
    # The last chunk has the longest position; the metadata is otherwise the same for all.
    size = json_size({**vector_metadata(chunks[-1]), MODEL_FIELD: signature})
    if size > MAX_METADATA_BYTES:
        raise problem(
            document,
            f"metadata takes {size} bytes per chunk; at most {MAX_METADATA_BYTES} fit",
            "metadata",
        )
