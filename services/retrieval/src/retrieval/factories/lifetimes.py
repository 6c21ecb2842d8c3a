"""How the container holds an adapter: closed at shutdown, or once its indexes exist."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, TypeVar


class Indexed(Protocol):
    async def ensure_indexes(self) -> None: ...


S = TypeVar("S", bound=Indexed)


async def indexed(store: S) -> AsyncIterator[S]:
    """``store`` once the indexes it reads by exist (made at start, never dropped)."""
    await store.ensure_indexes()
    yield store


class Closeable(Protocol):
    async def close(self) -> None: ...


C = TypeVar("C", bound=Closeable)


async def closed_at_shutdown(adapter: C) -> AsyncIterator[C]:
    """``adapter`` for the container's lifetime, closed at shutdown: it releases what it
    holds (HTTP clients opened on this loop, an embedded index's directory lock, the local
    model's threads)."""
    yield adapter
    await adapter.close()
