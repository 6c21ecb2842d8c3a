"""The KeywordIndex port on a Pinecone sparse index, its vectors made by Pinecone Inference.

The index must be created with ``vector_type="sparse"`` and ``metric="dotproduct"`` (a dense
index cannot hold sparse values). Texts become sparse vectors through the learned sparse
model (default ``pinecone-sparse-english-v0``): records as ``input_type="passage"``, queries
as ``"query"``, inputs past the model's 512 tokens cut at the end (``truncate="END"``).
Scores are the model's dot products, so they rank one query's results and nothing more.
Nothing depends on the rest of the corpus (no document frequencies), so replicas share the
index with nothing to keep in sync.

Writes: texts are embedded ``MAX_EMBED_BATCH`` (the model's cap of 96) at a time and the
records upserted as ``{"id", "sparse_values", "metadata"}``, both ``concurrency`` requests
at a time, within Pinecone's upsert limits (``pinecone_limits``); ids and metadata over a
limit are refused before anything is sent. An id given twice is written once, with its
last record. A text in which the model finds no term (an empty sparse vector, which
Pinecone refuses) is stored with ``TERMLESS`` instead: a tiny weight at the last uint32
index, where no query vector of the model is expected to carry weight. So the record is
listed, counted, deleted and overwritten like any other, and the stores stay consistent
(the BM25 index keeps such texts too), but no query finds it.

Reads: a blank text or an empty query vector finds nothing without asking the index;
matches with a score that is not positive are dropped (Pinecone does not document whether
a sparse index returns records sharing no index with the query); ties are broken by id.
Filters are validated locally (``InvalidFilterError``) and sent as written. A namespace
without records finds nothing: Pinecone answers such a query with no matches, and should
it answer 404 the adapter asks ``describe_index_stats``, so a 404 for a missing index
still raises ``IndexNotFoundError``. Deletes send at most 1000 ids a request; a delete
where nothing is stored does nothing.

Freshness (``pinecone_freshness``): the LSN of every acknowledged upsert and delete, and the
LSN every query was answered at, are noted in ``lsns`` (this index's, ``SPARSE``), so a
retrieval counts as settled only once this index too has shown the writes of the namespace's
generation. A query that finds nothing without asking the index notes nothing.

Worst-case time per port call, with C the bound of one SDK call (``pinecone_errors``):
query 3 C; upsert of n texts in b requests (ceil(ceil(n / 96) / concurrency) +
ceil(b / concurrency)) C; delete by n ids ceil(ceil(n / 1000) / concurrency) C, all C,
each plus C when nothing is stored; count C; each page of a listing C.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from pinecone import SparseEmbedding

from retrieval.adapters.pinecone.clients import IndexCalls, PineconeConnection
from retrieval.adapters.pinecone.freshness import PineconeLsns
from retrieval.adapters.pinecone.inference import MAX_EMBED_BATCH, InferenceEmbeddings
from retrieval.adapters.pinecone.limits import (
    MAX_TOP_K,
    check_id,
    pack_requests,
    with_metadata,
)
from retrieval.batching import gather_bounded
from retrieval.domain.filters import parse_delete_selector, parse_filter
from retrieval.domain.keywords import KeywordMatch, KeywordRecord
from retrieval.errors import BackendError, IndexNotFoundError, InvalidRequestError
from retrieval.ports.vector_index import MetadataFilter

DEFAULT_MODEL = "pinecone-sparse-english-v0"

SparseVector = dict[str, list]
"""``{"indices": [...], "values": [...]}``, as Pinecone takes a sparse vector."""

TERMLESS: SparseVector = {"indices": [2**32 - 1], "values": [1e-6]}
"""What a record whose text has no term is stored with: a vector no query shares."""


@dataclass(eq=False)
class PineconeSparseKeywordIndex:
    connection: PineconeConnection
    lsns: PineconeLsns
    _: KW_ONLY
    model: str = DEFAULT_MODEL
    embed_batch_size: int = MAX_EMBED_BATCH
    concurrency: int = 4
    _inference: InferenceEmbeddings = field(init=False)
    _index: IndexCalls = field(init=False)

    def __post_init__(self) -> None:
        self._inference = InferenceEmbeddings(
            self.connection,
            model=self.model,
            batch_size=self.embed_batch_size,
            concurrency=self.concurrency,
        )
        self._index = IndexCalls(self.connection)

    async def close(self) -> None:
        """Release the connections of the running loop's clients."""
        await self._index.close()
        await self._inference.close()

    async def upsert(self, records: Sequence[KeywordRecord], namespace: str) -> int:
        latest = list({record.id: record for record in records}.values())
        for record in latest:
            check_id(record.id)
        bare = [with_metadata({"id": record.id}, record.metadata) for record in latest]
        vectors = await self._embed_passages([record.text for record in latest])
        wires = [
            {**wire, "sparse_values": vector if vector["indices"] else TERMLESS}
            for wire, vector in zip(bare, vectors, strict=True)
        ]
        await gather_bounded(
            [self._upsert_call(batch, namespace) for batch in pack_requests(wires, namespace)],
            self.concurrency,
        )
        return len(wires)

    def _upsert_call(self, batch: list[dict[str, Any]], namespace: str) -> Callable[[], Awaitable]:
        return lambda: self._upsert(batch, namespace)

    async def _upsert(self, batch: list[dict[str, Any]], namespace: str) -> None:
        response = await self._index(
            "upsert", lambda index: index.upsert(vectors=batch, namespace=namespace)
        )
        if response.response_info is not None:
            self.lsns.wrote(namespace, response.response_info.lsn_committed)

    async def query(
        self,
        text: str,
        *,
        top_k: int,
        namespace: str,
        filter: MetadataFilter | None = None,
    ) -> list[KeywordMatch]:
        expression = parse_filter(filter)
        if not 1 <= top_k <= MAX_TOP_K:
            raise InvalidRequestError(f"top_k must be between 1 and {MAX_TOP_K}", field="top_k")
        if not text.strip():
            return []
        (vector,) = await self._embed([text], "query")
        if not vector["indices"]:
            return []
        try:
            response = await self._index(
                "query",
                lambda index: index.query(
                    top_k=top_k,
                    sparse_vector=vector,
                    namespace=namespace,
                    filter=filter if expression is not None else None,
                    include_values=False,
                    include_metadata=False,
                ),
            )
        except IndexNotFoundError:
            if namespace in await self._index.namespace_counts():
                raise
            return []
        self.lsns.answered(namespace, response)
        ranked = sorted(
            (match for match in response.matches if match.score > 0),
            key=lambda match: (-match.score, match.id),
        )
        return [KeywordMatch(id=match.id, score=match.score) for match in ranked]

    async def delete(
        self, *, namespace: str, ids: Sequence[str] | None = None, delete_all: bool = False
    ) -> None:
        parse_delete_selector(ids, None, delete_all)
        if ids is None:
            lsn = await self._index.delete(namespace, delete_all=True)
        else:
            lsn = await self._index.delete_ids(namespace, ids, self.concurrency)
        self.lsns.wrote(namespace, lsn)

    def list_ids(self, namespace: str, *, prefix: str | None = None) -> AsyncIterator[list[str]]:
        return self._index.list_ids(namespace, prefix)

    async def count(self, namespace: str) -> int:
        return (await self._index.namespace_counts()).get(namespace, 0)

    async def _embed_passages(self, texts: Sequence[str]) -> list[SparseVector]:
        batches = await self._inference.in_batches(
            texts, lambda batch: self._embed(batch, "passage")
        )
        return [vector for batch in batches for vector in batch]

    async def _embed(self, texts: Sequence[str], input_type: str) -> list[SparseVector]:
        returned = await self._inference.embed(texts, input_type)
        embeddings = [item for item in returned if isinstance(item, SparseEmbedding)]
        if len(embeddings) != len(texts):
            raise BackendError(
                f"Pinecone Inference {self.model} returned {len(embeddings)} sparse "
                f"embeddings for {len(texts)} texts"
            )
        return [
            {"indices": list(item.sparse_indices), "values": list(item.sparse_values)}
            for item in embeddings
        ]
