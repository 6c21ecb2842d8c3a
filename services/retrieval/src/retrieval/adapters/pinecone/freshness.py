"""Pinecone serverless is eventually consistent: reading this process's own writes.

Each write to a namespace gets a log sequence number (LSN), increasing within the namespace,
answered in ``x-pinecone-request-lsn``; a query answers in ``x-pinecone-max-indexed-lsn``
the LSN up to which its namespace was indexed, and reflects every write at or below it. The
SDK (10.2.0) reads both into ``response_info``: ``lsn_committed`` on an upsert and
``lsn_reconciled`` on a query, ``None`` when the header is absent (unknown, not zero). Its
``delete`` returns nothing, so a delete is sent as the SDK sends it and its LSN read from
the answer (``lsn_of_delete``).

``WrittenLsns`` remembers, per namespace, the highest LSN of the upserts this process had
acknowledged. It is bounded: the ``capacity`` namespaces written last, each for ``window``
seconds after its last write. Past the window Pinecone has long caught up (it documents a
slight delay), and an entry that can never be reached (should Pinecone number a namespace
afresh once it is emptied) stops mattering. What it does not hold says nothing: another
replica may have written there.

The dense index and the sparse keyword index are two Pinecone indexes, each numbering its
namespaces' writes on its own, so their LSNs are never compared with each other. Each index
adapter notes its writes and answers in a ``PineconeLsns`` of its own, named ``DENSE`` or
``SPARSE``. A sparse index's query is answered as a dense one's: the SDK reads the LSN from
``x-pinecone-max-indexed-lsn``, or else from ``x-pinecone-lsn-reconciled``, whichever the
answer carries.

``PineconeIndexLsns`` is the ``IndexLsns`` port over both: per index, the written LSNs the
service stores with a namespace's generation (so every replica learns what to wait for), and
the LSNs the queries of one retrieval were answered at (a context variable holding a
collector, so the tasks a retrieval starts add to the same one).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractContextManager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from pinecone import AsyncIndex, QueryResponse

from retrieval.context_scope import bound
from retrieval.ports.index_lsns import AnsweredLsns, highest
from retrieval.retries import RetryPolicy

DENSE = "dense"
SPARSE = "sparse"
"""The names the LSNs of the two indexes are kept under."""
REMEMBERED_NAMESPACES = 10_000
REMEMBERED_FOR_S = 300.0
POLLS = RetryPolicy(initial_backoff=0.1, max_backoff=1.0)
"""Pauses between queries waiting for the index (its ``backoff``; it ends at the deadline)."""


@dataclass(frozen=True, eq=False)
class WrittenLsns:
    """The highest acknowledged write LSN per namespace, for the namespaces written last."""

    capacity: int = REMEMBERED_NAMESPACES
    window: float = REMEMBERED_FOR_S
    clock: Callable[[], float] = time.monotonic
    _lsns: OrderedDict[str, tuple[int, float]] = field(init=False, default_factory=OrderedDict)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        if self.capacity < 1:
            raise ValueError("capacity must be at least 1")

    def remember(self, namespace: str, lsn: int | None) -> None:
        """Note an acknowledged write; one without an LSN tells nothing to wait for."""
        if lsn is None:
            return
        with self._lock:
            known = self._lsns.pop(namespace, None)
            highest = lsn if known is None else max(lsn, known[0])
            self._lsns[namespace] = (highest, self.clock())
            while len(self._lsns) > self.capacity:
                self._lsns.popitem(last=False)

    def get(self, namespace: str) -> int | None:
        """The LSN a query must reflect to show this process's writes; ``None``: no write
        within the window."""
        with self._lock:
            known = self._lsns.get(namespace)
            if known is None:
                return None
            if self.clock() - known[1] > self.window:
                del self._lsns[namespace]
                return None
            return known[0]


ANSWERS: ContextVar[AnsweredLsns | None] = ContextVar("pinecone_answers", default=None)


@dataclass(frozen=True, eq=False)
class PineconeLsns:
    """The LSNs of one Pinecone index (named ``index``: ``DENSE`` or ``SPARSE``), for this
    process."""

    index: str = DENSE
    _written: WrittenLsns = field(init=False, default_factory=WrittenLsns)

    def wrote(self, namespace: str, lsn: int | None) -> None:
        """Note an acknowledged write (an upsert or a delete)."""
        self._written.remember(namespace, lsn)

    def written(self, namespace: str) -> int | None:
        return self._written.get(namespace)

    def answered(self, namespace: str, response: QueryResponse) -> None:
        """Note the LSN ``response`` was answered at, for the retrieval under way."""
        answers = ANSWERS.get()
        if answers is not None:
            info = response.response_info
            answers.note(self.index, namespace, None if info is None else info.lsn_reconciled)


class PineconeIndexLsns:
    """The ``IndexLsns`` of the Pinecone indexes of ``indexes``, for this process."""

    def __init__(self, *indexes: PineconeLsns) -> None:
        self._indexes = indexes

    def written(self, namespace: str) -> Mapping[str, int]:
        return highest({lsns.index: lsns.written(namespace) for lsns in self._indexes})

    def answering(self) -> AbstractContextManager[AnsweredLsns]:
        return bound(ANSWERS, AnsweredLsns())


async def lsn_of_delete(index: AsyncIndex, namespace: str, **selector: Any) -> int | None:
    """Delete as ``AsyncIndex.delete`` does (SDK 10.2.0: the same request through the same
    HTTP client, so the same errors), answering the delete's LSN, which the SDK drops."""
    body: dict[str, Any] = {"namespace": namespace}
    if selector.get("ids") is not None:
        body["ids"] = list(selector["ids"])
    if selector.get("delete_all"):
        body["deleteAll"] = True
    if selector.get("filter") is not None:
        body["filter"] = selector["filter"]
    response = await index._http.post("/vectors/delete", json=body)
    committed = response.headers.get("x-pinecone-request-lsn")
    return int(committed) if committed is not None and committed.isdigit() else None


def reflects(response: QueryResponse, lsn: int) -> bool:
    """Whether ``response`` was answered by an index that reflects the write of ``lsn``."""
    return response.response_info is not None and response.response_info.is_reconciled(lsn)


async def reflecting(
    first: QueryResponse,
    search: Callable[[], Awaitable[QueryResponse]],
    lsn: int,
    *,
    deadline: float,
    room: float,
) -> QueryResponse | None:
    """``first``, or else the first answer of ``search()`` that has matches or reflects the
    write of ``lsn``, asked after pauses of ``POLLS``.

    ``None`` when no answer can show it: the index does not say how far it got, or the
    deadline (on the running loop's clock) leaves less than ``room`` after the next pause. A
    query under way at the deadline is abandoned.
    """
    loop = asyncio.get_running_loop()
    response, poll = first, 0
    while not (response.matches or reflects(response, lsn)):
        if response.response_info is None or response.response_info.lsn_reconciled is None:
            return None
        pause = POLLS.backoff(poll)
        if loop.time() + pause + room > deadline:
            return None
        await asyncio.sleep(pause)
        try:
            async with asyncio.timeout_at(deadline):
                response = await search()
        except TimeoutError:
            return None
        poll += 1
    return response
