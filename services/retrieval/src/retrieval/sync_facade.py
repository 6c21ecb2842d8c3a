"""The knowledge base for code without an event loop: ``SyncKnowledgeBase``.

A thin runner over the async API (``retrieval.client_api.KnowledgeBaseApi``), never a second
implementation: each method sends the async method of the same name, with the same arguments,
to an event loop of the facade's own in a background thread, and waits for its result.
``retrieval.connect_sync()`` opens one in process, ``RetrievalClient.connect_sync(target)``
one over gRPC::

    with retrieval.connect_sync() as kb:
        kb.ingest(["docs/"], namespace="handbook")
        result = kb.retrieve("how do I rotate keys?", namespace="handbook")
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from types import TracebackType
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, Self, TypeVar

from retrieval.client_api import KnowledgeBaseApi

if TYPE_CHECKING:
    from retrieval.domain.answers import AnswerEvent

P = ParamSpec("P")
R = TypeVar("R")
Opening = Callable[[], AbstractAsyncContextManager[KnowledgeBaseApi]]
"""What opens the async API (``retrieval.connect``, ``RetrievalClient.connect``), called on
the facade's loop, where the API then lives."""


def blocking(
    method: Callable[Concatenate[Any, P], Awaitable[R]],
) -> Callable[Concatenate[SyncKnowledgeBase, P], R]:
    """``method`` of the async API, waited for: its name, arguments and documentation."""
    name = method.__name__

    @functools.wraps(method)
    def call(self: SyncKnowledgeBase, *args: P.args, **kwargs: P.kwargs) -> R:
        async def called() -> R:
            return await getattr(self._api, name)(*args, **kwargs)

        return self._run(called())

    return call


class SyncKnowledgeBase:
    """``KnowledgeBaseApi``'s methods, blocking: opened by ``opening`` on a loop of its own,
    closed (the stores stopped, the channel closed) by ``close()`` or leaving ``with``."""

    def __init__(self, opening: Opening) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="retrieval-sync-facade", daemon=True
        )
        self._thread.start()
        self._exits = AsyncExitStack()
        self._closed = False

        async def opened() -> KnowledgeBaseApi:
            return await self._exits.enter_async_context(opening())

        try:
            self._api = self._run(opened())
        except BaseException:
            self._stop_loop()
            raise

    retrieve = blocking(KnowledgeBaseApi.retrieve)
    ingest = blocking(KnowledgeBaseApi.ingest)
    sync = blocking(KnowledgeBaseApi.sync)
    delete = blocking(KnowledgeBaseApi.delete)
    documents = blocking(KnowledgeBaseApi.documents)
    ask = blocking(KnowledgeBaseApi.ask)
    stats = blocking(KnowledgeBaseApi.stats)

    def ask_stream(self, question: str, **arguments: Any) -> Iterator[AnswerEvent]:
        """``KnowledgeBaseApi.ask_stream``: the events as the model writes them. Leaving the
        loop early (``break``, an error) closes the stream, which stops the model."""

        async def opened() -> Any:
            return self._api.ask_stream(question, **arguments)

        stream = self._run(opened())

        async def following() -> AnswerEvent | None:
            return await anext(stream, None)

        try:
            while (event := self._run(following())) is not None:
                yield event
        finally:
            self._run(stream.aclose())

    def close(self) -> None:
        """Close the async API, then stop the loop; a second call does nothing."""
        if self._closed:
            return
        self._closed = True
        try:
            self._run(self._exits.aclose())
        finally:
            self._stop_loop()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _run(self, coroutine: Coroutine[Any, Any, R]) -> R:
        """The coroutine's result, run on the loop; interrupted, the coroutine is cancelled."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()
