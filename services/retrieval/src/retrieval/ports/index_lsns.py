from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Protocol


def highest(*lsns: Mapping[str, int | None]) -> dict[str, int]:
    """Per index named in any of ``lsns``, the highest of its known LSNs (``None``: unknown);
    an index with none known is left out."""
    merged: dict[str, int] = {}
    for each in lsns:
        for index, lsn in each.items():
            if lsn is not None:
                merged[index] = max(lsn, merged.get(index, lsn))
    return merged


class AnsweredLsns:
    """The lowest log sequence number (LSN) at which each index answered the queries of one
    retrieval, per namespace; ``None`` where an answer of that index carried none."""

    def __init__(self) -> None:
        self._lowest: dict[str, dict[str, int | None]] = {}

    def note(self, index: str, namespace: str, lsn: int | None) -> None:
        answered = self._lowest.setdefault(namespace, {})
        if index in answered:
            known = answered[index]
            lsn = None if known is None or lsn is None else min(known, lsn)
        answered[index] = lsn

    def lowest(self, namespace: str) -> Mapping[str, int | None]:
        """Per index that answered a query in the namespace, its lowest LSN; an index asked
        nothing there is left out."""
        return dict(self._lowest.get(namespace, {}))


class IndexLsns(Protocol):
    """How far the eventually consistent indexes of the service (Pinecone serverless: the dense
    vector index and the sparse keyword index) have got, in the log sequence numbers (LSNs)
    each gives its writes and answers its queries with; an answer at or above a write's LSN
    reflects that write. LSNs increase within a namespace of one index, and say nothing about
    another index: they are kept per index, under its name (no ``.`` and no ``$`` in it)."""

    def written(self, namespace: str) -> Mapping[str, int]:
        """Per index, the highest LSN of the writes (upserts and deletes) this process had
        acknowledged in the namespace lately; an index it knows of none there is left out."""
        ...

    def answering(self) -> AbstractContextManager[AnsweredLsns]:
        """Collect the LSNs of the indexes' answers to the queries made inside the block (in
        this task and the tasks it starts)."""
        ...
