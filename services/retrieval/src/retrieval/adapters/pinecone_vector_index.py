"""The VectorIndex port on a Pinecone index through the SDK's ``AsyncIndex``.

The index must be a dense index created with ``metric="cosine"``, so scores are cosine
similarities. Requests stay within Pinecone's limits (``pinecone_limits``): an upsert is
split into requests of at most 1000 records and 2 MB, sent ``concurrency`` at a time, and
a record over a limit is refused before anything is sent. Filters are validated locally
first (``InvalidFilterError`` like every index) and then sent exactly as the caller wrote
them, in the caller's namespace.

Missing namespaces: Pinecone answers a query in an unknown namespace with no matches and
a delete there with 404. Only then does the adapter ask ``describe_index_stats``: no
vectors in the namespace means ``NamespaceNotFoundError`` for a query and nothing to do
for a delete. A non-empty answer proves the namespace exists, so the hot path costs one
request and no cache can go stale.

Listing ids asks for pages of ``LIST_PAGE_SIZE`` (Pinecone's cap of 100) one at a time,
following Pinecone's pagination token; a page that comes back empty is not passed on.

Worst-case time per port call, with C the bound of one SDK call (``pinecone_errors``):
query 2 C; stats C; upsert in b requests ceil(b / concurrency) C; delete by n ids
ceil(ceil(n / 1000) / concurrency) C, by filter or all C, plus C when the namespace
turns out to be missing; each page of a listing C.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, TypeVar

from pinecone import AsyncIndex, ListResponse

from retrieval.adapters.batching import slices
from retrieval.adapters.pinecone_clients import PerLoop, PineconeConnection, gather_bounded
from retrieval.adapters.pinecone_errors import bounded
from retrieval.adapters.pinecone_limits import (
    MAX_IDS_PER_REQUEST,
    MAX_TOP_K_WITH_METADATA,
    check_id,
    upsert_batches,
)
from retrieval.domain.filters import parse_delete_selector, parse_filter
from retrieval.domain.vectors import IndexStats, NamespaceStats, QueryMatch, VectorRecord
from retrieval.errors import IndexNotFoundError, InvalidRequestError, NamespaceNotFoundError
from retrieval.ports.vector_index import LIST_PAGE_SIZE, MetadataFilter

T = TypeVar("T")

DEFAULT_NAMESPACE = "__default__"


async def close_index(index: AsyncIndex) -> None:
    await index.close()


class PineconeVectorIndex:
    def __init__(self, connection: PineconeConnection, concurrency: int = 4) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self._connection = connection
        self._concurrency = concurrency
        self._clients = PerLoop(connection.open_index, close_index)

    async def close(self) -> None:
        """Release the connections of the running loop's client."""
        await self._clients.close()

    async def upsert(self, records: Sequence[VectorRecord], namespace: str) -> int:
        batches = upsert_batches(records, namespace)
        await gather_bounded(
            [self._upsert_call(batch, namespace) for batch in batches], self._concurrency
        )
        return len(records)

    def _upsert_call(self, batch: list[dict[str, Any]], namespace: str) -> Callable[[], Awaitable]:
        return lambda: self._call(
            "upsert", lambda index: index.upsert(vectors=batch, namespace=namespace)
        )

    async def query(
        self,
        vector: Sequence[float],
        *,
        top_k: int,
        namespace: str,
        filter: MetadataFilter | None = None,
        include_values: bool = False,
    ) -> list[QueryMatch]:
        expression = parse_filter(filter)
        if not 1 <= top_k <= MAX_TOP_K_WITH_METADATA:
            raise InvalidRequestError(
                f"top_k must be between 1 and {MAX_TOP_K_WITH_METADATA}", field="top_k"
            )
        values = [float(value) for value in vector]
        if not any(values):
            raise InvalidRequestError("an all-zero query has no direction", field="vector")
        response = await self._call(
            "query",
            lambda index: index.query(
                top_k=top_k,
                vector=values,
                namespace=namespace,
                filter=filter if expression is not None else None,
                include_values=include_values,
                include_metadata=True,
            ),
        )
        if not response.matches and not await self._holds_vectors(namespace):
            raise NamespaceNotFoundError(namespace)
        ranked = sorted(response.matches, key=lambda match: (-match.score, match.id))
        return [
            QueryMatch.model_construct(
                id=match.id,
                score=match.score,
                values=tuple(match.values) if include_values else None,
                metadata=dict(match.metadata or {}),
            )
            for match in ranked
        ]

    async def delete(
        self,
        *,
        namespace: str,
        ids: Sequence[str] | None = None,
        filter: MetadataFilter | None = None,
        delete_all: bool = False,
    ) -> None:
        parse_delete_selector(ids, filter, delete_all)
        if ids is None:
            await self._delete(namespace, filter=filter, delete_all=delete_all)
            return
        unique = list(dict.fromkeys(ids))
        for record_id in unique:
            check_id(record_id)
        await gather_bounded(
            [self._delete_call(batch, namespace) for batch in slices(unique, MAX_IDS_PER_REQUEST)],
            self._concurrency,
        )

    def _delete_call(self, ids: Sequence[str], namespace: str) -> Callable[[], Awaitable]:
        return lambda: self._delete(namespace, ids=ids)

    async def _delete(self, namespace: str, **selector: Any) -> None:
        try:
            await self._call("delete", lambda index: index.delete(namespace=namespace, **selector))
        except IndexNotFoundError:
            if await self._holds_vectors(namespace):
                raise

    async def stats(self) -> IndexStats:
        response = await self._call(
            "describe_index_stats", lambda index: index.describe_index_stats()
        )
        namespaces = {
            ("" if name == DEFAULT_NAMESPACE else name): NamespaceStats(
                vector_count=summary.vector_count
            )
            for name, summary in response.namespaces.items()
            if summary.vector_count > 0
        }
        return IndexStats(
            dimension=response.dimension,
            total_vector_count=sum(ns.vector_count for ns in namespaces.values()),
            namespaces=namespaces,
        )

    async def list_ids(
        self, namespace: str, *, prefix: str | None = None
    ) -> AsyncIterator[list[str]]:
        token: str | None = None
        while True:
            page = await self._list_page(namespace, prefix, token)
            ids = [item.id for item in page.vectors if item.id is not None]
            if ids:
                yield ids
            token = page.pagination.next if page.pagination is not None else None
            if token is None:
                return

    async def _list_page(
        self, namespace: str, prefix: str | None, token: str | None
    ) -> ListResponse:
        return await self._call(
            "list",
            lambda index: index.list_paginated(
                namespace=namespace, prefix=prefix, limit=LIST_PAGE_SIZE, pagination_token=token
            ),
        )

    async def _holds_vectors(self, namespace: str) -> bool:
        return namespace in (await self.stats()).namespaces

    async def _call(self, operation: str, call: Callable[[AsyncIndex], Awaitable[T]]) -> T:
        index = self._clients.get()
        return await bounded(
            call(index),
            what=f"{self._connection.index_label} {operation}",
            call_timeout=self._connection.call_timeout,
        )
