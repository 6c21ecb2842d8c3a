"""The VectorIndex port on a Pinecone index through the SDK's ``AsyncIndex``.

The index must be a dense index created with ``metric="cosine"``, so scores are cosine
similarities. Requests stay within Pinecone's limits (``pinecone_limits``): an upsert is
split into requests of at most 1000 records and 2 MB, sent ``concurrency`` at a time, and
a record over a limit is refused before anything is sent. Filters are validated locally
first (``InvalidFilterError`` like every index) and then sent exactly as the caller wrote
them, in the caller's namespace.

Missing namespaces: Pinecone answers a query in an unknown namespace with no matches and
a delete there with 404. A query with no matches is settled by Pinecone's own answers, each
telling how far the namespace was indexed (``pinecone_freshness``):

- Does the namespace show records? Without a filter the empty answer says no; with one, a
  query without it for one record decides (one namespace's state with its LSN, where
  ``describe_index_stats`` gives every namespace's without one). If it does: no matches.
- If not, and the answer showing it reflects every write this process acknowledged there
  (within ``REMEMBERED_FOR_S``), or there was none: ``NamespaceNotFoundError``.
- If not, but it misses such an upsert, the write is not indexed yet: the query is asked
  again after growing pauses until an answer has matches or reflects the write. Matches
  are returned. An answer reflecting the write with none: ``NamespaceNotFoundError``
  without a filter (emptied since), no matches with one. The call's deadline
  (``call_timeout`` from its start) or an index that does not report how far it got ends
  the wait with no matches: the namespace holds the write, so it is not "not found".

So only a namespace this process wrote and the index does not show yet is waited for; a
shown namespace answers at once, as fresh as Pinecone makes it. A replica that did not
write the namespace knows of no pending write: right after another replica's first upsert
it raises ``NamespaceNotFoundError``, as the index shows.

A delete answered 404 and a fetch ask ``describe_index_stats``: no vectors in the
namespace means nothing to do for a delete, and no records for a fetch (which answers 200
with no records there on the stand-in and needledb, and gets the same treatment should
Pinecone answer 404). A non-empty answer proves the namespace exists, so the hot path costs
one request and no cache can go stale.

Fetching sends each distinct id once, in requests of at most ``MAX_FETCH_IDS`` ids and
``MAX_FETCH_QUERY_CHARS`` characters of query string (the ids travel in the URL, and the
SDK's httpx refuses a query over 65,536), ``concurrency`` requests at a time; an id
Pinecone cannot hold is refused before anything is sent, as for a delete.

Listing ids asks for pages of ``LIST_PAGE_SIZE`` (Pinecone's cap of 100) one at a time,
following Pinecone's pagination token; a page that comes back empty is not passed on.

Worst-case time per port call, with C the bound of one SDK call (``pinecone_errors``):
query without a filter ``call_timeout`` (C at most), with one max(``call_timeout``, 2 C),
which is 2 C by default; stats C; upsert or fetch in b requests ceil(b / concurrency) C (a
fetch of n ids of up to about 55 encoded characters is ceil(n / 1000) requests); delete by
n ids ceil(ceil(n / 1000) / concurrency) C, by filter or all C; a delete or fetch request
plus C when the namespace turns out to be missing; each page of a listing C.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, TypeVar
from urllib.parse import quote

from pinecone import AsyncIndex, QueryResponse, Vector

from retrieval.adapters.pinecone.clients import (
    DEFAULT_NAMESPACE,
    IndexCalls,
    PineconeConnection,
)
from retrieval.adapters.pinecone.freshness import PineconeLsns, reflecting, reflects
from retrieval.adapters.pinecone.limits import (
    MAX_TOP_K_WITH_METADATA,
    check_id,
    packed,
    upsert_batches,
)
from retrieval.batching import gather_bounded
from retrieval.domain.filters import parse_delete_selector, parse_filter
from retrieval.domain.vectors import (
    NO_METADATA,
    IndexStats,
    NamespaceStats,
    QueryMatch,
    VectorRecord,
    check_finite,
)
from retrieval.errors import IndexNotFoundError, InvalidRequestError, NamespaceNotFoundError
from retrieval.ports.vector_index import MAX_FETCH_IDS, MetadataFilter

T = TypeVar("T")

MAX_FETCH_QUERY_CHARS = 60_000
"""Characters of one fetch's query string: under httpx's 65,536 with room to spare."""


def fetch_batches(ids: Sequence[str], namespace: str) -> list[list[str]]:
    """The distinct ``ids`` in order, packed into fetch requests within the limits.

    Lengths are measured with every reserved character percent-encoded, never shorter than
    httpx encodes them. Raises ``InvalidRequestError`` for an id Pinecone cannot hold.
    """
    unique = list(dict.fromkeys(ids))
    for record_id in unique:
        check_id(record_id)
    return packed(
        unique,
        [len(f"&ids={quote(record_id, safe='')}") for record_id in unique],
        envelope=len(f"namespace={quote(namespace, safe='')}"),
        most=MAX_FETCH_IDS,
        room=MAX_FETCH_QUERY_CHARS,
    )


class PineconeVectorIndex:
    def __init__(
        self, connection: PineconeConnection, lsns: PineconeLsns, concurrency: int = 4
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self._concurrency = concurrency
        self._connection = connection
        self._index = IndexCalls(connection)
        self._lsns = lsns

    async def close(self) -> None:
        """Release the connections of the running loop's client."""
        await self._index.close()

    async def upsert(self, records: Sequence[VectorRecord], namespace: str) -> int:
        batches = upsert_batches(records, namespace)
        await gather_bounded(
            [self._upsert_call(batch, namespace) for batch in batches], self._concurrency
        )
        return len(records)

    def _upsert_call(self, batch: list[dict[str, Any]], namespace: str) -> Callable[[], Awaitable]:
        return lambda: self._upsert(batch, namespace)

    async def _upsert(self, batch: list[dict[str, Any]], namespace: str) -> None:
        response = await self._call(
            "upsert", lambda index: index.upsert(vectors=batch, namespace=namespace)
        )
        if response.response_info is not None:
            self._lsns.wrote(namespace, response.response_info.lsn_committed)

    async def query(
        self,
        vector: Sequence[float],
        *,
        top_k: int,
        namespace: str,
        filter: MetadataFilter | None = None,
        include_values: bool = False,
        include_metadata: bool = True,
    ) -> list[QueryMatch]:
        expression = parse_filter(filter)
        if not 1 <= top_k <= MAX_TOP_K_WITH_METADATA:
            raise InvalidRequestError(
                f"top_k must be between 1 and {MAX_TOP_K_WITH_METADATA}", field="top_k"
            )
        values = [float(value) for value in vector]
        check_finite(values, field="vector")
        if not any(values):
            raise InvalidRequestError("an all-zero query has no direction", field="vector")
        deadline = asyncio.get_running_loop().time() + self._connection.call_timeout
        sent_filter = filter if expression is not None else None

        def search() -> Awaitable[QueryResponse]:
            return self._search(
                values, top_k, namespace, sent_filter, include_values, include_metadata
            )

        response = await search()
        if not response.matches:
            empty = await self._shown_empty(values, namespace, sent_filter, response)
            if empty is None:
                return []
            written = self._lsns.written(namespace)
            if written is None or reflects(empty, written):
                raise NamespaceNotFoundError(namespace)
            fresh = await reflecting(
                response,
                search,
                written,
                deadline=deadline,
                room=self._connection.request_timeout,
            )
            if fresh is None or (not fresh.matches and sent_filter is not None):
                return []
            if not fresh.matches:
                raise NamespaceNotFoundError(namespace)
            response = fresh
        ranked = sorted(response.matches, key=lambda match: (-match.score, match.id))
        return [
            QueryMatch(
                id=match.id,
                score=match.score,
                values=tuple(match.values) if include_values else None,
                metadata=dict(match.metadata or {}) if include_metadata else NO_METADATA,
            )
            for match in ranked
        ]

    async def _search(
        self,
        values: list[float],
        top_k: int,
        namespace: str,
        filter: MetadataFilter | None,
        include_values: bool,
        include_metadata: bool = True,
    ) -> QueryResponse:
        response = await self._call(
            "query",
            lambda index: index.query(
                top_k=top_k,
                vector=values,
                namespace=namespace,
                filter=filter,
                include_values=include_values,
                include_metadata=include_metadata,
            ),
        )
        self._lsns.answered(namespace, response)
        return response

    async def _shown_empty(
        self,
        values: list[float],
        namespace: str,
        filter: MetadataFilter | None,
        answer: QueryResponse,
    ) -> QueryResponse | None:
        """The answer that shows the namespace without records, once ``answer`` to a query
        with ``filter`` found none: ``answer`` itself without a filter, else a query without
        it for one record; ``None`` when the namespace shows records."""
        if filter is None:
            return answer
        probe = await self._search(values, 1, namespace, None, False, include_metadata=False)
        return None if probe.matches else probe

    async def fetch(self, ids: Sequence[str], namespace: str) -> dict[str, VectorRecord]:
        batches = await gather_bounded(
            [self._fetch_call(batch, namespace) for batch in fetch_batches(ids, namespace)],
            self._concurrency,
        )
        return {
            record_id: VectorRecord.model_construct(
                id=record_id, values=tuple(vector.values), metadata=dict(vector.metadata or {})
            )
            for batch in batches
            for record_id, vector in batch.items()
        }

    def _fetch_call(
        self, ids: Sequence[str], namespace: str
    ) -> Callable[[], Awaitable[dict[str, Vector]]]:
        return lambda: self._fetch(ids, namespace)

    async def _fetch(self, ids: Sequence[str], namespace: str) -> dict[str, Vector]:
        try:
            response = await self._call(
                "fetch", lambda index: index.fetch(ids=ids, namespace=namespace)
            )
        except IndexNotFoundError:
            if await self._holds_vectors(namespace):
                raise
            return {}
        return response.vectors

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
            lsn = await self._index.delete(namespace, filter=filter, delete_all=delete_all)
        else:
            lsn = await self._index.delete_ids(namespace, ids, self._concurrency)
        self._lsns.wrote(namespace, lsn)

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

    def list_ids(self, namespace: str, *, prefix: str | None = None) -> AsyncIterator[list[str]]:
        return self._index.list_ids(namespace, prefix)

    async def _holds_vectors(self, namespace: str) -> bool:
        return namespace in (await self.stats()).namespaces

    async def _call(self, operation: str, call: Callable[[AsyncIndex], Awaitable[T]]) -> T:
        return await self._index(operation, call)
