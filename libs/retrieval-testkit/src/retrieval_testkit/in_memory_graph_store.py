"""A GraphStore in dicts: every lookup a scan, the reference the MongoDB store meets."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from retrieval.domain.filters import evaluate, parse_filter
from retrieval.domain.graph import GraphRecord
from retrieval.errors import InvalidRequestError
from retrieval.ports.graph_store import ABOUT_READ
from retrieval.ports.vector_index import MetadataFilter, id_pages
from retrieval_testkit.namespaced_records import NamespacedRecords


class InMemoryGraphStore(NamespacedRecords[GraphRecord]):
    async def upsert(self, records: Sequence[GraphRecord], namespace: str) -> int:
        self._namespaces.setdefault(namespace, {}).update((r.id, r) for r in records)
        return len(records)

    async def get_many(self, ids: Sequence[str], namespace: str) -> dict[str, GraphRecord]:
        records = self._namespaces.get(namespace, {})
        return {record_id: records[record_id] for record_id in ids if record_id in records}

    async def linked(
        self,
        entities: Sequence[str],
        *,
        namespace: str,
        per_entity: int,
        filter: MetadataFilter | None = None,
    ) -> dict[str, list[GraphRecord]]:
        if per_entity < 1:
            raise InvalidRequestError(f"per_entity must be at least 1, got {per_entity}")
        expression = parse_filter(filter)
        records = sorted(self._namespaces.get(namespace, {}).values(), key=lambda r: r.id)
        passing = [record for record in records if evaluate(expression, record.metadata)]
        return {
            entity: (
                [r for r in passing if entity in r.about]
                + [r for r in passing if entity in r.mentions and entity not in r.about]
            )[:per_entity]
            for entity in dict.fromkeys(entities)
        }

    async def about(
        self,
        entities: Sequence[str],
        *,
        namespace: str,
        filter: MetadataFilter | None = None,
    ) -> list[GraphRecord]:
        expression = parse_filter(filter)
        wanted = set(entities)
        read = [
            record
            for _, record in sorted(self._namespaces.get(namespace, {}).items())
            if wanted & set(record.about)
        ][:ABOUT_READ]
        return [record for record in read if evaluate(expression, record.metadata)]

    async def outdated_ids(
        self, namespace: str, version: str, *, prefix: str | None = None
    ) -> AsyncIterator[list[str]]:
        records = self._namespaces.get(namespace, {})
        for page in id_pages([i for i, r in records.items() if r.version != version], prefix):
            yield page

    async def entity_count(self, namespace: str) -> int:
        records = self._namespaces.get(namespace, {}).values()
        return len({entity for record in records for entity in record.entities})
