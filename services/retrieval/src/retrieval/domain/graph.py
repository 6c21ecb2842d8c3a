"""The knowledge graph of a namespace: which entities each chunk is about and mentions.

Nodes are Documents, Chunks (a chunk id names its document: the CONTAINS edge) and Entities,
named by their normalised name (``name_key``). A chunk is ABOUT the entities its document's
title names (``title_keys``), and MENTIONS the names its text contains. One ``GraphRecord``
per chunk holds its edges, under the chunk's id, with the chunk's filterable metadata, and
the typed relations between entities its text states (an LLM extractor's; none from rules).
"""

from __future__ import annotations

import re

from pydantic import Field

from retrieval.domain.chunk_identity import vector_metadata
from retrieval.domain.metadata import Metadata
from retrieval.domain.models import Frozen, RagChunk
from retrieval.domain.names import name_key, title_keys
from retrieval.domain.vectors import MAX_RECORD_ID_CHARS

MAX_RELATIONS = 32
"""Relations a chunk's record keeps at most, in the order extracted."""
MAX_RELATION_TYPE_CHARS = 48
MAX_DESCRIPTION_CHARS = 200
RELATION_TYPE = r"^[A-Z0-9]+(?:_[A-Z0-9]+)*$"
RELATED = "RELATED_TO"
"""The type of a relation whose stated type reads as none."""
RECORD_FORMAT = "graph:2"
"""Changes with how a record is made from a chunk and its extraction (``graph_record``, the
title keys): records of another format, or another extractor, are made again by a repair."""


class Relation(Frozen):
    """A relation between two entities a chunk's text states: ``source`` TYPE ``target``."""

    source: str = Field(min_length=1, description="Entity it goes from (a name key).")
    target: str = Field(min_length=1, description="Entity it goes to (a name key).")
    type: str = Field(
        max_length=MAX_RELATION_TYPE_CHARS,
        pattern=RELATION_TYPE,
        description="Upper snake case, e.g. PORTRAYED_BY.",
    )
    description: str = Field(
        default="", max_length=MAX_DESCRIPTION_CHARS, description="What the text says of it."
    )


class Extraction(Frozen):
    """What a knowledge extractor found in a text."""

    names: tuple[str, ...] = Field(default=(), description="Entities named, normalised.")
    relations: tuple[Relation, ...] = Field(
        default=(), description="Relations stated between them."
    )


def relation(source: str, target: str, kind: str, description: str = "") -> Relation | None:
    """The relation between the entities named ``source`` and ``target``: endpoints as name
    keys, the type in upper snake case (``portrayed by`` -> ``PORTRAYED_BY``; ``RELATED_TO``
    when nothing of it is left), the description on one line, cut to
    ``MAX_DESCRIPTION_CHARS``. None when an endpoint names nothing or both name one entity."""
    ends = name_key(source), name_key(target)
    if not all(ends) or ends[0] == ends[1]:
        return None
    typed = name_key(kind).replace(" ", "_").upper()[:MAX_RELATION_TYPE_CHARS].strip("_")
    return Relation(
        source=ends[0],
        target=ends[1],
        type=typed if re.fullmatch(RELATION_TYPE, typed) else RELATED,
        description=" ".join(description.split())[:MAX_DESCRIPTION_CHARS].rstrip(),
    )


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
    relations: tuple[Relation, ...] = Field(
        default=(), max_length=MAX_RELATIONS, description="Relations its text states."
    )
    version: str = Field(
        default="",
        description="The record format and extractor that made it (``record_version``); "
        "empty for records written before versions were kept.",
    )

    @property
    def entities(self) -> tuple[str, ...]:
        return (*self.about, *self.mentions)


def record_version(extractor: str) -> str:
    """The version of the records an extractor of version ``extractor`` makes."""
    return f"{RECORD_FORMAT}/{extractor}"


def graph_record(chunk: RagChunk, extraction: Extraction, version: str = "") -> GraphRecord:
    """The record of a chunk whose text states ``extraction`` (an extractor's output, made
    in ``version``): the entities of its relations are mentioned too; its first
    ``MAX_RELATIONS`` distinct relations are kept."""
    about = title_keys(chunk.title)
    relations = tuple(dict.fromkeys(extraction.relations))[:MAX_RELATIONS]
    keys = (
        *(name_key(name) for name in extraction.names),
        *(end for r in relations for end in (r.source, r.target)),
    )
    mentions = dict.fromkeys(key for key in keys if key and key not in about)
    return GraphRecord(
        id=chunk.chunk_id,
        about=about,
        mentions=tuple(mentions),
        metadata=vector_metadata(chunk),
        relations=relations,
        version=version,
    )


def without_title(chunk: RagChunk) -> str:
    """A chunk's text without the title heading it (the title names the chunk itself)."""
    if chunk.title and chunk.content.startswith(chunk.title):
        return chunk.content[len(chunk.title) :]
    return chunk.content
