"""A brute-force VectorIndex over the reference filter evaluator: slow, obviously right."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Sequence

from retrieval.domain.filters import evaluate, parse_delete_selector, parse_filter
from retrieval.domain.metadata import copied
from retrieval.domain.vectors import (
    NO_METADATA,
    IndexStats,
    NamespaceStats,
    QueryMatch,
    VectorRecord,
    check_finite,
)
from retrieval.errors import InvalidRequestError, NamespaceNotFoundError
from retrieval.ports.vector_index import MetadataFilter, id_pages


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / norms if norms else 0.0


class InMemoryVectorIndex:
    def __init__(self) -> None:
        self._namespaces: dict[str, dict[str, VectorRecord]] = {}
        self._dimension: int | None = None

    async def upsert(self, records: Sequence[VectorRecord], namespace: str) -> int:
        for record in records:
            if self._dimension is not None and len(record.values) != self._dimension:
                raise InvalidRequestError(
                    f"vector of dimension {len(record.values)} in an index of {self._dimension}",
                    field="values",
                )
            check_finite(record.values, field="values", owner=record.id)
            if not any(record.values):
                raise InvalidRequestError("an all-zero vector has no direction", field="values")
            self._dimension = len(record.values)
        for record in records:
            self._namespaces.setdefault(namespace, {})[record.id] = stored(record)
        return len(records)

    async def query(
        self,
        vector: Sequence[float],
        *,
        top_k: int,
        namespace: str,
        filter: MetadataFilter | None = None,
        include_values: bool = False,
        include_metadata: bool = True,
    ) -> list[QueryMatch]:
        expression = parse_filter(filter)
        records = self._namespaces.get(namespace)
        if not records:
            raise NamespaceNotFoundError(namespace)
        if len(vector) != self._dimension:
            raise InvalidRequestError(
                f"query of dimension {len(vector)} in an index of {self._dimension}", field="vector"
            )
        check_finite(vector, field="vector")
        scored = [
            QueryMatch(
                id=record.id,
                score=cosine(vector, record.values),
                values=record.values if include_values else None,
                metadata=copied(record.metadata) if include_metadata else NO_METADATA,
            )
            for record in records.values()
            if evaluate(expression, record.metadata)
        ]
        scored.sort(key=lambda match: (-match.score, match.id))
        return scored[:top_k]

    async def fetch(self, ids: Sequence[str], namespace: str) -> dict[str, VectorRecord]:
        records = self._namespaces.get(namespace, {})
        return {record_id: stored(records[record_id]) for record_id in ids if record_id in records}

    async def delete(
        self,
        *,
        namespace: str,
        ids: Sequence[str] | None = None,
        filter: MetadataFilter | None = None,
        delete_all: bool = False,
    ) -> None:
        expression = parse_delete_selector(ids, filter, delete_all)
        records = self._namespaces.get(namespace, {})
        if delete_all:
            records.clear()
        elif ids is not None:
            for record_id in ids:
                records.pop(record_id, None)
        else:
            for record_id in [r.id for r in records.values() if evaluate(expression, r.metadata)]:
                del records[record_id]
        if not records:
            self._namespaces.pop(namespace, None)

    async def stats(self) -> IndexStats:
        namespaces = {
            name: NamespaceStats(vector_count=len(records))
            for name, records in self._namespaces.items()
        }
        return IndexStats(
            dimension=self._dimension,
            total_vector_count=sum(ns.vector_count for ns in namespaces.values()),
            namespaces=namespaces,
        )

    async def list_ids(
        self, namespace: str, *, prefix: str | None = None
    ) -> AsyncIterator[list[str]]:
        for page in id_pages(self._namespaces.get(namespace, {}), prefix):
            yield page


def stored(record: VectorRecord) -> VectorRecord:
    """A copy of ``record`` sharing no metadata with it, as a real index keeps and returns."""
    return record.model_copy(update={"metadata": copied(record.metadata)})
