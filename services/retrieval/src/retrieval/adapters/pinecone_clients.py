"""Where Pinecone is, and one SDK client per event loop.

The SDK's async clients hold an ``httpx.AsyncClient`` bound to the loop that first used
it, so an adapter keeps one client per running loop, made on first use there. ``close``
releases the client of the loop it is awaited on; a loop that is gone takes its client's
connections with it.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from pinecone import AsyncIndex, AsyncPinecone
from pinecone.errors import PineconeError

from retrieval.errors import BackendNotConfiguredError

Client = TypeVar("Client")
T = TypeVar("T")


@dataclass(frozen=True)
class PineconeConnection:
    """Credentials, hosts and time limits shared by the Pinecone adapters."""

    api_key: str | None = field(default=None, repr=False)
    index_host: str | None = None
    control_host: str | None = None
    index_name: str | None = None
    request_timeout: float = 5.0
    call_timeout: float = 15.0

    @property
    def index_label(self) -> str:
        return f"Pinecone index {self.index_name or self.index_host}"

    def open_index(self) -> AsyncIndex:
        """A data-plane client; ``BackendNotConfiguredError`` without a key or a valid host."""
        if not self.api_key or not self.index_host:
            raise BackendNotConfiguredError(
                "the Pinecone index needs RETRIEVAL_PINECONE_API_KEY and "
                "RETRIEVAL_PINECONE_INDEX_HOST"
            )
        try:
            return AsyncIndex(
                host=self.index_host, api_key=self.api_key, timeout=self.request_timeout
            )
        except PineconeError as error:
            raise BackendNotConfiguredError(f"{self.index_label}: {error}") from error

    def open_control(self) -> AsyncPinecone:
        """A control-plane client (it serves inference); needs the API key."""
        if not self.api_key:
            raise BackendNotConfiguredError("Pinecone Inference needs RETRIEVAL_PINECONE_API_KEY")
        try:
            return AsyncPinecone(
                api_key=self.api_key, host=self.control_host, timeout=self.request_timeout
            )
        except PineconeError as error:
            raise BackendNotConfiguredError(f"Pinecone control plane: {error}") from error


class PerLoop(Generic[Client]):
    """One client per running event loop, made by ``open`` and released by ``close``."""

    def __init__(
        self, open: Callable[[], Client], close: Callable[[Client], Awaitable[None]]
    ) -> None:
        self._open = open
        self._close = close
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Client] = (
            weakref.WeakKeyDictionary()
        )

    def get(self) -> Client:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = self._open()
        return client

    async def close(self) -> None:
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await self._close(client)


async def gather_bounded(calls: Sequence[Callable[[], Awaitable[T]]], concurrency: int) -> list[T]:
    """Results of ``calls`` in order, at most ``concurrency`` at a time.

    The first failure cancels the calls still running and is raised as it was.
    """
    semaphore = asyncio.Semaphore(concurrency)

    async def run(call: Callable[[], Awaitable[T]]) -> T:
        async with semaphore:
            return await call()

    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(run(call)) for call in calls]
    except ExceptionGroup as failures:
        first = failures.exceptions[0]
    else:
        return [task.result() for task in tasks]
    raise first
