"""A backed-up document made ready for the writer again, in the namespace it is restored to
and for the model of the stack it is restored on; and the file read a group ahead of the
writer."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Generator
from typing import TypeVar

from retrieval.domain.backup import BackedUpDocument
from retrieval.domain.models import RagDocument
from retrieval.domain.provenance import Source
from retrieval.service.ingestion.chunking import Prepared, chunk

T = TypeVar("T")


def source_of(document: BackedUpDocument) -> Source | None:
    """Where the document came from: its record's provenance, else what its chunks name."""
    provenance = document.record.provenance
    if provenance is not None:
        return provenance.source
    first = document.chunks[0]
    return None if first.source is None else Source(uri=first.source, file_type=first.file_type)


def prepared_again(
    document: BackedUpDocument,
    namespace: str,
    model: str,
    dimension: int | None,
    graph_version: str | None,
) -> Prepared:
    """The document cut as it was, its chunk ids made for ``model`` (the same ids when it is
    the backup's model); with its vectors when ``dimension`` is given (the model is the
    backup's), else to be embedded again; with its graph records made in ``graph_version``
    when that is given (the stack's graph records are of the backup's version), else to be
    extracted again."""
    first = document.chunks[0]
    whole = RagDocument(
        document_id=document.document_id,
        title=first.title,
        domain=first.domain,
        content="\n\n".join(piece.content for piece in document.chunks),
        metadata=first.metadata,
        source=source_of(document),
    )
    chunks = [
        chunk(whole, namespace, model, piece.position, piece.content, piece.section, piece.pages)
        for piece in document.chunks
    ]
    vectors = None if dimension is None else document.matrix(dimension)
    graph = None if graph_version is None else document.graph(chunks, graph_version)
    return Prepared(whole, chunks, vectors, graph)


async def read_ahead(items: Generator[T, None, None]) -> AsyncIterator[T]:
    """The items of ``items`` (never None), each next one read in a thread while the caller
    writes the one before: reading, parsing and preparing a group overlap the stores' writes
    of the last, one group ahead at most. However the caller stops, the read under way ends
    before ``items`` is closed."""
    taking = asyncio.ensure_future(asyncio.to_thread(next, items, None))
    try:
        while (item := await asyncio.shield(taking)) is not None:
            taking = asyncio.ensure_future(asyncio.to_thread(next, items, None))
            yield item
    finally:
        await asyncio.wait([taking])
        items.close()
