"""Where Pinecone is, one SDK client per event loop, and the calls every index adapter makes.

The SDK's async clients hold an ``httpx.AsyncClient`` bound to the loop that first used
it, so an adapter keeps one client per running loop, made on first use there. ``close``
releases the client of the loop it is awaited on; a loop that is gone takes its client's
connections with it.

Every client is made with the SDK's own retries off: ``pinecone_errors`` retries instead,
within the call's deadline.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from pinecone import AsyncIndex, AsyncPinecone, ListResponse, RetryConfig
from pinecone.errors import PineconeError

from retrieval.adapters.per_loop import PerLoop
from retrieval.adapters.pinecone.errors import bounded
from retrieval.adapters.pinecone.freshness import lsn_of_delete
from retrieval.adapters.pinecone.limits import MAX_IDS_PER_REQUEST, check_id
from retrieval.batching import gather_bounded, slices
from retrieval.errors import BackendNotConfiguredError, IndexNotFoundError
from retrieval.observability.round_trips import store_round_trip
from retrieval.ports.vector_index import LIST_PAGE_SIZE

T = TypeVar("T")

DEFAULT_NAMESPACE = "__default__"
"""How Pinecone names the namespace ``""`` in its answers."""
NO_SDK_RETRIES = RetryConfig(max_retries=0)


def without_sdk_retries(index: AsyncIndex) -> AsyncIndex:
    """``index`` with the SDK's retries off. ``AsyncIndex`` takes no ``retry_config`` (SDK
    10.2.0): its HTTP client reads the one of its config when it first connects, so that
    config is replaced before then."""
    http = index._http
    http._config = replace(http._config, retry_config=NO_SDK_RETRIES)
    return index


@dataclass(frozen=True)
class PineconeConnection:
    """Credentials, hosts and time limits shared by the Pinecone adapters.

    ``host_setting`` names the setting that gives ``index_host``, for the error a missing
    host raises.
    """

    api_key: str | None = field(default=None, repr=False)
    index_host: str | None = None
    control_host: str | None = None
    index_name: str | None = None
    request_timeout: float = 5.0
    call_timeout: float = 15.0
    host_setting: str = "RETRIEVAL_PINECONE_INDEX_HOST"

    @property
    def index_label(self) -> str:
        return f"Pinecone index {self.index_name or self.index_host}"

    def open_index(self) -> AsyncIndex:
        """A data-plane client; ``BackendNotConfiguredError`` without a key or a valid host."""
        if not self.api_key or not self.index_host:
            raise BackendNotConfiguredError(
                f"the Pinecone index needs RETRIEVAL_PINECONE_API_KEY and {self.host_setting}"
            )
        try:
            return without_sdk_retries(
                AsyncIndex(host=self.index_host, api_key=self.api_key, timeout=self.request_timeout)
            )
        except PineconeError as error:
            raise BackendNotConfiguredError(f"{self.index_label}: {error}") from error

    def open_control(self) -> AsyncPinecone:
        """A control-plane client (it serves inference); needs the API key."""
        if not self.api_key:
            raise BackendNotConfiguredError("Pinecone Inference needs RETRIEVAL_PINECONE_API_KEY")
        try:
            return AsyncPinecone(
                api_key=self.api_key,
                host=self.control_host,
                timeout=self.request_timeout,
                retry_config=NO_SDK_RETRIES,
            )
        except PineconeError as error:
            raise BackendNotConfiguredError(f"Pinecone control plane: {error}") from error


class IndexCalls:
    """SDK calls on the index of ``connection``, each bounded and translated (``pinecone_errors``).

    ``await calls(operation, lambda index: index.query(...))`` makes one call on the running
    loop's ``AsyncIndex``; the methods are the calls the index adapters share.
    """

    def __init__(self, connection: PineconeConnection) -> None:
        self._connection = connection
        self._clients = PerLoop(connection.open_index, lambda index: index.close())

    async def __call__(self, operation: str, call: Callable[[AsyncIndex], Awaitable[T]]) -> T:
        store_round_trip()
        return await bounded(
            lambda: call(self._clients.get()),
            what=f"{self._connection.index_label} {operation}",
            request_timeout=self._connection.request_timeout,
            call_timeout=self._connection.call_timeout,
        )

    async def close(self) -> None:
        """Release the connections of the running loop's client."""
        await self._clients.close()

    async def namespace_counts(self) -> dict[str, int]:
        """Records per namespace that holds any (``""`` for Pinecone's ``__default__``)."""
        response = await self("describe_index_stats", lambda index: index.describe_index_stats())
        return {
            ("" if name == DEFAULT_NAMESPACE else name): summary.vector_count
            for name, summary in response.namespaces.items()
            if summary.vector_count > 0
        }

    async def delete(self, namespace: str, **selector: Any) -> int | None:
        """One delete request, answering its LSN (``None`` if unknown or nothing to do); the
        404 Pinecone answers in a namespace without records is nothing to do (asked of
        ``describe_index_stats`` only after a 404)."""
        try:
            return await self("delete", lambda index: lsn_of_delete(index, namespace, **selector))
        except IndexNotFoundError:
            if namespace in await self.namespace_counts():
                raise
            return None

    async def delete_ids(self, namespace: str, ids: Sequence[str], concurrency: int) -> int | None:
        """Every id checked first, then deleted ``MAX_IDS_PER_REQUEST`` at a time; the highest
        LSN answered."""
        unique = list(dict.fromkeys(ids))
        for record_id in unique:
            check_id(record_id)
        lsns = await gather_bounded(
            [self._delete_call(namespace, batch) for batch in slices(unique, MAX_IDS_PER_REQUEST)],
            concurrency,
        )
        return max((lsn for lsn in lsns if lsn is not None), default=None)

    def _delete_call(
        self, namespace: str, ids: Sequence[str]
    ) -> Callable[[], Awaitable[int | None]]:
        return lambda: self.delete(namespace, ids=ids)

    async def list_ids(self, namespace: str, prefix: str | None) -> AsyncIterator[list[str]]:
        """Pages of ``LIST_PAGE_SIZE`` ids, one request each, following Pinecone's token; a
        page that comes back empty is not passed on."""
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
        return await self(
            "list",
            lambda index: index.list_paginated(
                namespace=namespace, prefix=prefix, limit=LIST_PAGE_SIZE, pagination_token=token
            ),
        )
