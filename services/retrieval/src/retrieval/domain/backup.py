"""What a backup of a namespace holds: a header naming the model its vectors were made with
and the version of its graph records, then each document's committed version (its ledger
record, its chunk texts, their vectors, what the graph extractor found in each).

Keyword entries are not kept: the writer makes them again from the chunk texts with the
keyword index of the stack the backup is restored on. Graph records are kept as the
extractions they were made from, and made again from them when the restoring stack's graph
records are of the same version; else the writer reads the texts with its own extractor, as
``reconcile`` does. How the file is laid out: ``retrieval.adapters.backup_file``.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from datetime import datetime

import numpy as np
import numpy.typing as npt
from pydantic import Field

from retrieval.domain.frozen import Frozen
from retrieval.domain.graph import Extraction, GraphRecord, graph_record
from retrieval.domain.ledger import DocumentRecord, DocumentState
from retrieval.domain.models import RagChunk

BACKUP_FORMAT = "retrieval-backup"
FORMAT_VERSION = 2
"""2: the graph's extractions kept (``BackupHeader.graph_version``,
``BackedUpDocument.extractions``); files of version 1 are read as holding none."""
VECTOR_DTYPE = np.dtype("<f4")
"""Vectors are kept as little-endian 32-bit floats, row by row: exact, and a quarter of
their JSON size."""


class BackupHeader(Frozen):
    """The first entry of a backup."""

    format: str = Field(default=BACKUP_FORMAT, description="Always ``retrieval-backup``.")
    version: int = Field(default=FORMAT_VERSION, ge=1, description="Version of the format.")
    namespace: str = Field(description="The namespace backed up.")
    model: str = Field(description="The embedding model the vectors were made with.")
    dimension: int = Field(ge=1, description="The dimension of those vectors.")
    graph_version: str | None = Field(
        default=None,
        description="The version (``record_version``) of the graph records the documents' "
        "extractions were read from; None when the stack kept no graph.",
    )
    created_at: datetime = Field(description="When the backup began.")


class BackedUpDocument(Frozen):
    """One document's committed version."""

    record: DocumentRecord = Field(description="Its ledger record, committed, nothing stale.")
    chunks: tuple[RagChunk, ...] = Field(min_length=1, description="Its chunks, in order.")
    vectors: str | None = Field(
        default=None,
        description="The chunks' vectors, row by row in ``VECTOR_DTYPE``, in base64; None "
        "when the index lacked one (the restore embeds the document again).",
    )
    extractions: tuple[Extraction, ...] | None = Field(
        default=None,
        description="What the graph extractor found in each chunk, in order; None when a "
        "chunk's graph record was missing or of another version (the restore reads the "
        "texts again).",
    )

    @property
    def document_id(self) -> str:
        return self.record.document_id

    def matrix(self, dimension: int) -> npt.NDArray[np.float32] | None:
        """The vectors as one row per chunk, or None when the document has none."""
        if self.vectors is None:
            return None
        values = np.frombuffer(base64.b64decode(self.vectors), dtype=VECTOR_DTYPE)
        return values.reshape(len(self.chunks), dimension).astype(np.float32)

    def graph(self, chunks: Sequence[RagChunk], version: str) -> list[GraphRecord] | None:
        """The graph records of ``chunks`` (this document's, cut again, in order) made from
        its extractions in ``version``, or None when it has none. Their mentions are the
        keys written, kept as they are: a key made again from a key can differ (``The
        A-form`` gives ``a form``, and that gives ``form``)."""
        if self.extractions is None:
            return None
        return [
            graph_record(chunk, stated, version).model_copy(update={"mentions": stated.names})
            for chunk, stated in zip(chunks, self.extractions, strict=True)
        ]

    @classmethod
    def of(
        cls,
        record: DocumentRecord,
        chunks: Sequence[RagChunk],
        vectors: npt.NDArray[np.float32] | None,
        graph: Sequence[GraphRecord] | None = None,
    ) -> BackedUpDocument:
        """``chunks`` in order, ``vectors`` (if any) one row per chunk in the same order, and
        ``graph`` (if any) their graph records in the same order."""
        data = None
        if vectors is not None:
            data = base64.b64encode(np.asarray(vectors, dtype=VECTOR_DTYPE).tobytes()).decode()
        extractions = None if graph is None else tuple(map(extraction_of, graph))
        return cls(record=record, chunks=tuple(chunks), vectors=data, extractions=extractions)


def extraction_of(record: GraphRecord) -> Extraction:
    """The extraction ``graph_record`` makes ``record`` from again, for the same chunk: the
    names it mentions and the relations it states (those its title names are the chunk's
    ``about``, from the title)."""
    return Extraction(names=record.mentions, relations=record.relations)


class BackupContents(Frozen):
    """What a whole backup file was found to hold."""

    header: BackupHeader = Field(description="Its header.")
    documents: int = Field(ge=0, description="Documents it holds.")
    chunks: int = Field(ge=0, description="Chunks it holds.")


def committed_version(record: DocumentRecord) -> DocumentRecord | None:
    """The record of the version readers are shown (a pending write's previous one), with
    nothing stale; None when the document has no committed version."""
    version = record.abandon() if record.state is DocumentState.PENDING else record
    if version.state is not DocumentState.COMMITTED or not version.chunk_ids:
        return None
    return version.cleaned()
