"""What a framework's retriever searches, and how it calls it from any thread or event loop.

A retriever takes a ``KnowledgeBaseApi``: the knowledge base of this process
(``retrieval.connect()``) or a client of a running server (``retrieval.grpc.RetrievalClient``).
Both hold connections that belong to the event loop they were opened on, so each call is run
on that loop (``call_async``, ``call_blocking``), whichever thread or loop the framework calls
from.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from retrieval.client_api import KnowledgeBaseApi
from retrieval.domain.models import RetrievalOptions, RetrievalResult, validated

T = TypeVar("T")


@dataclass(frozen=True)
class SearchScope:
    """Where a retriever searches and how: the arguments of every ``retrieve`` it makes."""

    namespace: str | None = None
    top_k: int = 5
    domains: tuple[str, ...] = ()
    threshold: float = 0.0
    source_prefix: str | None = None
    section: str | None = None
    options: RetrievalOptions = field(default_factory=RetrievalOptions)

    def overridden(self, **changes: Any) -> SearchScope:
        """This scope with the fields and search options of one call (``top_k=3``,
        ``mode="keyword"``); an unknown name is an ``InvalidRequestError``."""
        own = {name: value for name, value in changes.items() if name in SCOPE_FIELDS}
        if "domains" in own:
            own["domains"] = tuple(own["domains"])
        options = {name: value for name, value in changes.items() if name not in SCOPE_FIELDS}
        if options:
            given = self.options.model_dump(exclude_none=True)
            own["options"] = validated(RetrievalOptions, **{**given, **options})
        return replace(self, **own)

    @classmethod
    def of(cls, search_options: Mapping[str, Any], **fields: Any) -> SearchScope:
        """The scope of a retriever's arguments: its fields, and ``search_options`` (each
        unset one taking the service's setting)."""
        options = validated(RetrievalOptions, **search_options)
        return cls(**{**fields, "domains": tuple(fields.get("domains", ()))}, options=options)


SCOPE_FIELDS = frozenset(SearchScope.__dataclass_fields__) - {"options"}


@dataclass(frozen=True)
class KnowledgeSearch:
    """A retriever's searches: ``knowledge`` over ``scope``, each run on ``loop``, the loop the
    knowledge source was opened on (None: the caller's), and changed for one call by the
    fields and search options given to it (``SearchScope.overridden``)."""

    knowledge: KnowledgeBaseApi
    scope: SearchScope
    loop: asyncio.AbstractEventLoop | None

    def blocking(self, query: str, **changes: Any) -> RetrievalResult:
        return call_blocking(self._search(query, changes), self.loop)

    async def awaited(self, query: str, **changes: Any) -> RetrievalResult:
        return await call_async(self._search(query, changes), self.loop)

    def _search(self, query: str, changes: dict[str, Any]) -> Coroutine[Any, Any, RetrievalResult]:
        return search(self.knowledge, query, self.scope.overridden(**changes))


async def search(knowledge: KnowledgeBaseApi, query: str, scope: SearchScope) -> RetrievalResult:
    """``knowledge.retrieve`` over ``scope``: its fields are the keywords ``retrieve`` takes."""
    given = {name: getattr(scope, name) for name in SCOPE_FIELDS}
    return await knowledge.retrieve(query, **given, **scope.options.model_dump(exclude_none=True))


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread, if any."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


async def call_async(call: Coroutine[Any, Any, T], home: asyncio.AbstractEventLoop | None) -> T:
    """Await ``call`` on ``home`` (the loop the knowledge source was opened on), from this
    loop or another; None: on this one."""
    if home is None or home is running_loop():
        return await call
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(call, home))


def call_blocking(call: Coroutine[Any, Any, T], home: asyncio.AbstractEventLoop | None) -> T:
    """Run ``call`` on ``home`` and wait for it, from a thread that is not running ``home``;
    None: on a new loop, from a thread running none."""
    here = running_loop()
    if here is not None and here is (home or here):
        call.close()
        raise RuntimeError(
            "a blocking call from the event loop the knowledge source runs on would stop "
            "that loop: await the async method (ainvoke, aretrieve) instead"
        )
    if home is None:
        return asyncio.run(call)
    return asyncio.run_coroutine_threadsafe(call, home).result()
