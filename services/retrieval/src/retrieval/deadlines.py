"""A call bounded in time, failing as a remote call past its deadline fails."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from retrieval.errors import BackendTimeoutError


@asynccontextmanager
async def answered_within(seconds: float | None, what: str) -> AsyncIterator[None]:
    """Bounds the block by ``seconds`` (None: no bound); past them, the block is
    cancelled and ``BackendTimeoutError`` raised, as the gRPC client raises it."""
    scope = asyncio.timeout(seconds)
    try:
        async with scope:
            yield
    except TimeoutError as error:
        if not scope.expired():
            raise
        raise BackendTimeoutError(f"{what}: no answer within {seconds:g} s") from error
