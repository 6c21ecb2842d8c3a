"""How the container holds an adapter: closed at shutdown, or once its indexes exist."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol, TypeVar

from dependency_injector import providers


class Indexed(Protocol):
    async def ensure_indexes(self) -> None: ...


S = TypeVar("S", bound=Indexed)


async def indexed(store: S) -> AsyncIterator[S]:
    """``store`` once the indexes it reads by exist (made at start, never dropped)."""
    await store.ensure_indexes()
    yield store


def with_indexes(factory: Callable[..., Indexed], /, **arguments: Any) -> providers.Resource:
    """A resource of what ``factory`` makes of ``arguments``, once its indexes exist."""
    return providers.Resource(indexed, providers.Factory(factory, **arguments))


class Closeable(Protocol):
    async def close(self) -> None: ...


C = TypeVar("C", bound=Closeable)


async def closed_at_shutdown(adapter: C) -> AsyncIterator[C]:
    """``adapter`` for the container's lifetime, closed at shutdown: it releases what it
    holds (HTTP clients opened on this loop, an embedded index's directory lock, the local
    model's threads)."""
    yield adapter
    await adapter.close()


def closing(factory: Callable[..., Closeable], /, **arguments: Any) -> providers.Resource:
    """A resource of what ``factory`` makes of ``arguments``, closed at shutdown."""
    return providers.Resource(closed_at_shutdown, providers.Factory(factory, **arguments))
