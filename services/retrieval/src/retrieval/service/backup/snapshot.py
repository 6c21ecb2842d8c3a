"""A namespace read for a backup, a page of ledger records at a time: each document's
committed version with its chunk texts, vectors and graph records."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import numpy as np

from retrieval.domain.backup import BackedUpDocument, committed_version
from retrieval.domain.graph import GraphRecord
from retrieval.domain.ledger import DocumentRecord
from retrieval.ports.document_ledger import DocumentLedger
from retrieval.service.ingestion.consistency import ChunkStores

READS = 3
"""Times a document whose chunks were not all found is read again from its record: a write
that replaced it while the backup ran is followed to its new version."""


class NamespaceSnapshot:
    """The committed documents of one namespace, as a backup reads them, each with the
    extractions of its graph records when all are of the stack's version; after reading,
    ``without_vectors`` names those whose index lacked a vector (the restore embeds them
    again) and ``left_out`` those that lost chunk texts (``reconcile`` reports them)."""

    def __init__(self, stores: ChunkStores, ledger: DocumentLedger, namespace: str) -> None:
        self._stores = stores
        self._ledger = ledger
        self._namespace = namespace
        self.without_vectors: list[str] = []
        self.left_out: list[str] = []

    async def documents(self) -> AsyncIterator[BackedUpDocument]:
        async for page in self._ledger.list_records(self._namespace):
            versions = [v for record in page if (v := committed_version(record)) is not None]
            for _ in range(READS):
                whole, broken = await self._read(versions)
                for document in whole:
                    yield document
                if not broken:
                    break
                versions = await self._read_again(broken)
            else:
                self.left_out.extend(version.document_id for version in versions)

    async def _read(
        self, versions: Sequence[DocumentRecord]
    ) -> tuple[list[BackedUpDocument], list[str]]:
        """The documents whose texts were all found, and the ids of the others."""
        ids = [chunk for version in versions for chunk in version.chunk_ids]
        texts = await self._stores.texts.get_many(ids, self._namespace)
        vectors = await self._stores.index.fetch(ids, self._namespace)
        graph = await self._graph(ids)
        whole: list[BackedUpDocument] = []
        broken: list[str] = []
        for version in versions:
            if not all(chunk in texts for chunk in version.chunk_ids):
                broken.append(version.document_id)
                continue
            chunks = sorted((texts[c] for c in version.chunk_ids), key=lambda c: c.position)
            matrix = None
            if all(chunk.chunk_id in vectors for chunk in chunks):
                matrix = np.array([vectors[chunk.chunk_id].values for chunk in chunks])
            else:
                self.without_vectors.append(version.document_id)
            records = [graph.get(chunk.chunk_id) for chunk in chunks]
            kept = None if None in records else [r for r in records if r is not None]
            whole.append(BackedUpDocument.of(version, chunks, matrix, kept))
        return whole, broken

    async def _graph(self, ids: Sequence[str]) -> dict[str, GraphRecord]:
        """The graph records of these chunks that are of the stack's version."""
        graph = self._stores.graph
        if graph is None:
            return {}
        records = await graph.store.get_many(ids, self._namespace)
        return {i: record for i, record in records.items() if record.version == graph.version}

    async def _read_again(self, document_ids: Sequence[str]) -> list[DocumentRecord]:
        records = await self._ledger.get_many(self._namespace, document_ids)
        return [v for record in records.values() if (v := committed_version(record)) is not None]
