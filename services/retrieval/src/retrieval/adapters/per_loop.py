"""One HTTP client per running event loop: an async client is bound to the loop that first
used it, so an adapter keeps one for each loop it runs on, made on first use there."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

Client = TypeVar("Client")


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
