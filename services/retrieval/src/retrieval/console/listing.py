"""A namespace's documents as its page lists them: those whose title, id or source holds the
filter's text (case aside), a page of ``PAGE_SIZE`` at a time."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlencode

from retrieval.service.ingestion.library import DocumentSummary

PAGE_SIZE = 50


@dataclass(frozen=True)
class DocumentListing:
    """One page of the documents the filter keeps."""

    documents: Sequence[DocumentSummary]
    matching: int
    page: int
    pages: int
    filter: str
    size: int

    @property
    def first(self) -> int:
        """The position of the page's first document among those kept, from 1."""
        return (self.page - 1) * self.size + 1 if self.documents else 0

    @property
    def last(self) -> int:
        return self.first + len(self.documents) - 1 if self.documents else 0

    def link(self, page: int) -> str:
        """The query string of another page of the same filter."""
        kept_filter = {"filter": self.filter} if self.filter else {}
        return "?" + urlencode({**kept_filter, "page": page})


def kept(document: DocumentSummary, text: str) -> bool:
    needle = text.casefold()
    return any(
        needle in field.casefold()
        for field in (document.title, document.document_id, document.source)
        if field is not None
    )


def document_listing(
    documents: Sequence[DocumentSummary], text: str, page: str | None, size: int = PAGE_SIZE
) -> DocumentListing:
    """The ``page``-th page (from 1; past the last, the last) of the ``documents`` that
    ``text`` keeps, all of them for blank ``text``."""
    text = text.strip()
    matching = (
        [document for document in documents if kept(document, text)] if text else list(documents)
    )
    pages = max(1, -(-len(matching) // size))
    number = min(max(int(page), 1), pages) if page and page.isdigit() else 1
    start = (number - 1) * size
    return DocumentListing(matching[start : start + size], len(matching), number, pages, text, size)
