from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol


class AnsweredLsns:
    """The lowest log sequence number (LSN) at which an index answered the queries of one
    retrieval, per namespace; ``None`` where an answer carried none (or none came)."""

    def __init__(self) -> None:
        self._lowest: dict[str, int | None] = {}

    def note(self, namespace: str, lsn: int | None) -> None:
        if namespace in self._lowest:
            known = self._lowest[namespace]
            lsn = None if known is None or lsn is None else min(known, lsn)
        self._lowest[namespace] = lsn

    def lowest(self, namespace: str) -> int | None:
        return self._lowest.get(namespace)


class IndexLsns(Protocol):
    """How far an eventually consistent vector index (Pinecone serverless) has got, in the log
    sequence numbers (LSNs) it gives each write and answers each query with; an answer at or
    above a write's LSN reflects that write. LSNs increase within a namespace."""

    def written(self, namespace: str) -> int | None:
        """The highest LSN of the writes (upserts and deletes) this process had acknowledged
        in the namespace lately; ``None`` when it knows of none."""
        ...

    def answering(self) -> AbstractContextManager[AnsweredLsns]:
        """Collect the LSNs of the index's answers to the queries made inside the block (in
        this task and the tasks it starts)."""
        ...
