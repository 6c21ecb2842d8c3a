"""What a namespace holds in each store, measured against its ledger records."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field

from retrieval.domain.chunk_identity import document_of, keyword_record, vector_record
from retrieval.domain.graph import GraphRecord
from retrieval.domain.ledger import DocumentRecord, DocumentState
from retrieval.domain.models import RagChunk
from retrieval.ports import ChunkRepository, KeywordIndex, VectorIndex
from retrieval.ports.document_ledger import DocumentLedger
from retrieval.service.ingestion.chunk_graph import ChunkGraph


@dataclass(frozen=True)
class ChunkStores:
    """The stores every chunk lives in, under its chunk id: texts, vectors, keyword entries
    and, unless ``graph`` is None, graph records."""

    index: VectorIndex
    keywords: KeywordIndex
    texts: ChunkRepository
    graph: ChunkGraph | None = None

    async def remove(self, chunk_ids: Sequence[str], namespace: str) -> int:
        """Vectors, keyword entries and graph records first, then texts, so no search ever
        finds a chunk without its text; returns how many texts existed."""
        if not chunk_ids:
            return 0
        ids = list(chunk_ids)
        await self.index.delete(namespace=namespace, ids=ids)
        await self.keywords.delete(namespace=namespace, ids=ids)
        if self.graph is not None:
            await self.graph.store.delete(namespace=namespace, ids=ids)
        return await self.texts.delete_chunks(ids, namespace)

    async def add_searchable(
        self,
        chunks: Sequence[RagChunk],
        vectors: Sequence[Sequence[float]],
        namespace: str,
        graph: Mapping[str, GraphRecord] | None = None,
    ) -> None:
        """The vectors, keyword entries and graph records of chunks whose texts are stored;
        ``graph`` holds records already made, by chunk id (the others are extracted)."""
        await self.index.upsert(
            [vector_record(chunk, v) for chunk, v in zip(chunks, vectors, strict=True)], namespace
        )
        await self.add_keywords(chunks, namespace)
        await self.add_graph(chunks, namespace, graph)

    async def add_keywords(self, chunks: Sequence[RagChunk], namespace: str) -> None:
        if chunks:
            await self.keywords.upsert([keyword_record(chunk) for chunk in chunks], namespace)

    async def add_graph(
        self,
        chunks: Sequence[RagChunk],
        namespace: str,
        made: Mapping[str, GraphRecord] | None = None,
    ) -> None:
        if self.graph is not None:
            await self.graph.add(chunks, namespace, made)

    async def graph_ids(
        self, namespace: str, prefix: str | None = None
    ) -> AsyncIterator[list[str]]:
        """The ids of the graph's records (none when no graph is kept)."""
        if self.graph is not None:
            async for page in self.graph.store.list_ids(namespace, prefix=prefix):
                yield page

    async def outdated_graph_ids(
        self, namespace: str, prefix: str | None = None
    ) -> AsyncIterator[list[str]]:
        """The ids of the graph's records another extractor or record format made (none
        when no graph is kept)."""
        if self.graph is not None:
            async for page in self.graph.outdated_ids(namespace, prefix):
                yield page


@dataclass
class NamespaceAudit:
    """Chunk ids by what is wrong with them, and the documents they belong to."""

    vectors: set[str] = field(default_factory=set)
    keywords: set[str] = field(default_factory=set)
    texts: dict[str, str] = field(default_factory=dict)
    records: dict[str, DocumentRecord] = field(default_factory=dict)
    graph: set[str] | None = None
    """Graph record ids; None when no graph is kept."""
    outdated_graph: set[str] = field(default_factory=set)
    """Ids of graph records another extractor or record format made."""

    @property
    def texts_without_vectors(self) -> set[str]:
        return set(self.texts) - self.vectors

    @property
    def vectors_without_texts(self) -> set[str]:
        return self.vectors - set(self.texts)

    @property
    def texts_without_keywords(self) -> set[str]:
        return set(self.texts) - self.keywords

    @property
    def keywords_without_texts(self) -> set[str]:
        return self.keywords - set(self.texts)

    @property
    def texts_without_graph(self) -> set[str]:
        return set() if self.graph is None else set(self.texts) - self.graph

    @property
    def graph_without_texts(self) -> set[str]:
        return set() if self.graph is None else self.graph - set(self.texts)

    @property
    def stored(self) -> set[str]:
        return self.vectors | self.keywords | set(self.texts) | (self.graph or set())

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
        """Chunks of committed versions missing a text, a vector or a keyword entry."""
        whole = self.vectors & self.keywords & set(self.texts)
        return self.current - whole

    @property
    def documents_to_repair(self) -> set[str]:
        damaged = (
            self.texts_without_vectors
            | self.vectors_without_texts
            | self.texts_without_keywords
            | self.keywords_without_texts
            | self.texts_without_graph
            | self.graph_without_texts
            | self.outdated_graph
            | self.stale
            | self.broken
        )
        return self.pending | {document_of(chunk) for chunk in damaged}

    @property
    def is_consistent(self) -> bool:
        return not self.documents_to_repair


async def audit(stores: ChunkStores, ledger: DocumentLedger, namespace: str) -> NamespaceAudit:
    """List the stores first, the ledger last: a write records its document before it
    stores a chunk, so every chunk listed has its record by the time records are read."""
    result = NamespaceAudit()
    async for page in stores.index.list_ids(namespace):
        result.vectors.update(page)
    async for keyword_page in stores.keywords.list_ids(namespace):
        result.keywords.update(keyword_page)
    if stores.graph is not None:
        result.graph = {i async for page in stores.graph_ids(namespace) for i in page}
        result.outdated_graph = {
            i async for page in stores.outdated_graph_ids(namespace) for i in page
        }
    async for text_page in stores.texts.list_chunks(namespace):
        result.texts.update(text_page)
    async for record_page in ledger.list_records(namespace):
        result.records.update({record.document_id: record for record in record_page})
    return result
