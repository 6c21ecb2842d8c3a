from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol

from retrieval.domain.keywords import KeywordMatch, KeywordRecord
from retrieval.ports.vector_index import MetadataFilter


class KeywordIndex(Protocol):
    """Lexical search over chunk texts, partitioned by namespace.

    Scores are positive and only comparable within one query's results (BM25 for the
    embedded index). Filters use the vector index's language (``retrieval.domain.filters``);
    a malformed filter raises ``InvalidFilterError``. Records share the ids of their
    chunks, so ``list_ids`` pages merge with the other stores' listings.
    """

    async def upsert(self, records: Sequence[KeywordRecord], namespace: str) -> int:
        """Insert or overwrite records by id; returns how many were written."""
        ...

    async def query(
        self,
        text: str,
        *,
        top_k: int,
        namespace: str,
        filter: MetadataFilter | None = None,
    ) -> list[KeywordMatch]:
        """Up to ``top_k`` records sharing at least one term with ``text``, best first, ties
        by id. A text with no searchable term, or an unknown namespace, finds nothing.
        Raises ``InvalidRequestError`` for a ``top_k`` below 1."""
        ...

    async def delete(
        self, *, namespace: str, ids: Sequence[str] | None = None, delete_all: bool = False
    ) -> None:
        """Delete by ids or everything in the namespace (exactly one of them, else
        ``InvalidRequestError``); deleting what does not exist is not an error."""
        ...

    def list_ids(self, namespace: str, *, prefix: str | None = None) -> AsyncIterator[list[str]]:
        """Every record id of the namespace, as ``VectorIndex.list_ids`` lists them: ascending
        code point order, non-empty pages of at most ``LIST_PAGE_SIZE``."""
        ...

    async def count(self, namespace: str) -> int:
        """Records in the namespace (0 for one never written)."""
        ...
