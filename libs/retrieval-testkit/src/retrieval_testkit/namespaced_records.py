"""Records by id in namespaces, in dicts: the deletion, listing and counting that every
in-memory index of chunk entries shares."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Generic, TypeVar

from retrieval.domain.filters import parse_delete_selector
from retrieval.ports.vector_index import id_pages

Record = TypeVar("Record")


class NamespacedRecords(Generic[Record]):
    def __init__(self) -> None:
        self._namespaces: dict[str, dict[str, Record]] = {}

    async def delete(
        self, *, namespace: str, ids: Sequence[str] | None = None, delete_all: bool = False
    ) -> None:
        parse_delete_selector(ids, None, delete_all)
        records = self._namespaces.get(namespace, {})
        for record_id in list(records) if delete_all else ids or ():
            records.pop(record_id, None)
        if not records:
            self._namespaces.pop(namespace, None)

    async def list_ids(
        self, namespace: str, *, prefix: str | None = None
    ) -> AsyncIterator[list[str]]:
        for page in id_pages(self._namespaces.get(namespace, {}), prefix):
            yield page

    async def count(self, namespace: str) -> int:
        return len(self._namespaces.get(namespace, {}))
