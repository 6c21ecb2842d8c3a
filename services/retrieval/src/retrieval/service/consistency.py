"""What a namespace holds in each store, measured against its ledger records."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from retrieval.domain.chunk_identity import document_of
from retrieval.domain.ledger import DocumentRecord, DocumentState
from retrieval.ports import ChunkRepository, VectorIndex
from retrieval.ports.document_ledger import DocumentLedger


async def remove_chunks(
    index: VectorIndex, chunks: ChunkRepository, chunk_ids: Sequence[str], namespace: str
) -> int:
    """Vectors first, then texts, so no vector is ever left without its text; returns how
    many texts existed."""
    if not chunk_ids:
        return 0
    await index.delete(namespace=namespace, ids=list(chunk_ids))
    return await chunks.delete_chunks(list(chunk_ids), namespace)


@dataclass
class NamespaceAudit:
    """Chunk ids by what is wrong with them, and the documents they belong to."""

    vectors: set[str] = field(default_factory=set)
    texts: dict[str, str] = field(default_factory=dict)
    records: dict[str, DocumentRecord] = field(default_factory=dict)

    @property
    def texts_without_vectors(self) -> set[str]:
        return set(self.texts) - self.vectors

    @property
    def vectors_without_texts(self) -> set[str]:
        return self.vectors - set(self.texts)

    @property
    def stored(self) -> set[str]:
        return self.vectors | set(self.texts)

    @property
    def current(self) -> set[str]:
        """Chunks of committed versions."""
        return {
            chunk
            for record in self.records.values()
            if record.state is DocumentState.COMMITTED
            for chunk in record.chunk_ids
        }

    @property
    def stale(self) -> set[str]:
        """Stored chunks of older versions: listed as stale, or not referenced at all."""
        referenced = {chunk for record in self.records.values() for chunk in record.referenced}
        listed = {chunk for record in self.records.values() for chunk in record.stale}
        return (self.stored & listed) | (self.stored - referenced)

    @property
    def pending(self) -> set[str]:
        return {
            document_id
            for document_id, record in self.records.items()
            if record.state is DocumentState.PENDING
        }

    @property
    def broken(self) -> set[str]:
        """Chunks of committed versions missing a text or a vector."""
        whole = self.vectors & set(self.texts)
        return self.current - whole

    @property
    def documents_to_repair(self) -> set[str]:
        damaged = self.texts_without_vectors | self.vectors_without_texts | self.stale | self.broken
        return self.pending | {document_of(chunk) for chunk in damaged}

    @property
    def is_consistent(self) -> bool:
        return not self.documents_to_repair


async def audit(
    index: VectorIndex, chunks: ChunkRepository, ledger: DocumentLedger, namespace: str
) -> NamespaceAudit:
    """List both stores first, the ledger last: a write records its document before it
    stores a chunk, so every chunk listed has its record by the time records are read."""
    result = NamespaceAudit()
    async for page in index.list_ids(namespace):
        result.vectors.update(page)
    async for text_page in chunks.list_chunks(namespace):
        result.texts.update(text_page)
    async for record_page in ledger.list_records(namespace):
        result.records.update({record.document_id: record for record in record_page})
    return result
