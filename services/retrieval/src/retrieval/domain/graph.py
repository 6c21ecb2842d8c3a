"""The knowledge graph of a namespace: which entities each chunk is about and mentions.

Nodes are Documents, Chunks (a chunk id names its document: the CONTAINS edge) and Entities,
named by their normalised name (``name_key``). A chunk is ABOUT the entity its document's
title names, and MENTIONS the names its text contains. One ``GraphRecord`` per chunk holds
its edges, under the chunk's id, with the chunk's filterable metadata.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from retrieval.domain.chunk_identity import vector_metadata
from retrieval.domain.metadata import Metadata
from retrieval.domain.models import Frozen, RagChunk
from retrieval.domain.names import name_key
from retrieval.domain.vectors import MAX_RECORD_ID_CHARS


class GraphRecord(Frozen):
    """A chunk's edges to the entities it is about and mentions."""

    id: str = Field(min_length=1, max_length=MAX_RECORD_ID_CHARS, description="Chunk id.")
    about: tuple[str, ...] = Field(
        default=(), description="Entities the chunk's document is about (its title's)."
    )
    mentions: tuple[str, ...] = Field(
        default=(), description="Other entities its text names, in order of first mention."
    )
    metadata: Metadata = Field(default_factory=dict, description="Filterable attributes.")

    @property
    def entities(self) -> tuple[str, ...]:
        return (*self.about, *self.mentions)


def graph_record(chunk: RagChunk, names: Sequence[str]) -> GraphRecord:
    """The record of a chunk whose text names ``names`` (an extractor's output)."""
    title = name_key(chunk.title)
    about = (title,) if title else ()
    mentions = dict.fromkeys(key for name in names if (key := name_key(name)) and key != title)
    return GraphRecord(
        id=chunk.chunk_id, about=about, mentions=tuple(mentions), metadata=vector_metadata(chunk)
    )


def without_title(chunk: RagChunk) -> str:
    """A chunk's text without the title heading it (the title names the chunk itself)."""
    if chunk.title and chunk.content.startswith(chunk.title):
        return chunk.content[len(chunk.title) :]
    return chunk.content
