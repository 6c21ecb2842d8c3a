"""A model or a store that stops answering, as a stopped process does (``SIGSTOP``): while a
``Stall`` is on, every call of the doubles it wraps waits, without end, until it is lifted.
Cancelling a waiting call ends its wait, as cancelling a call to a silent server does."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar, cast

Double = TypeVar("Double")


class Stall:
    """Holds every call of the doubles it wraps (``wrap``) between ``begin`` and ``lift``."""

    def __init__(self) -> None:
        self._lifted = asyncio.Event()
        self._lifted.set()
        self.waiting = 0
        """Calls waiting now."""

    def begin(self) -> None:
        self._lifted.clear()

    def lift(self) -> None:
        self._lifted.set()

    async def passed(self) -> None:
        """Return at once, or when the stall is lifted."""
        self.waiting += 1
        try:
            await self._lifted.wait()
        finally:
            self.waiting -= 1

    def wrap(self, double: Double) -> Double:
        """``double``, its every coroutine and async iterator method waiting for this stall
        first; its other attributes as they are."""
        return cast(Double, Stalled(double, self))


class Stalled:
    def __init__(self, double: object, stall: Stall) -> None:
        self._double = double
        self._stall = stall

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._double, name)
        if inspect.isasyncgenfunction(found):
            return self._iterating(found)
        if inspect.iscoroutinefunction(found):
            return self._calling(found)
        return found

    def _calling(self, method: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def called(*args: Any, **kwargs: Any) -> Any:
            await self._stall.passed()
            return await method(*args, **kwargs)

        return called

    def _iterating(self, method: Callable[..., AsyncIterator[Any]]) -> Callable[..., Any]:
        async def iterated(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            await self._stall.passed()
            async for item in method(*args, **kwargs):
                yield item

        return iterated
