"""Chunks from several sources and sections, and the queries that must find exactly some of
them: shared by the VectorIndex and KeywordIndex contract suites, which store the chunks'
metadata as ingestion writes it (``vector_metadata``) and filter as retrieval does
(``query_filter``)."""

from __future__ import annotations

from retrieval.domain.chunk_identity import query_filter, vector_metadata
from retrieval.domain.models import RagChunk, RetrievalQuery

SOURCED = {
    "p1": ("/kb/docs/a.md", "Install"),
    "p2": ("/kb/docs/sub/b.md", "Install > Linux"),
    "p3": ("/kb/docs-old/c.md", "Install"),
    "p4": ("https://example.com/docs/d.html", ""),
    "p5": (None, "Install"),
}
TEXT = "install the tea tools"
"""The text of every chunk: any query sharing a word finds them all, filters aside."""


def sourced_metadata() -> dict[str, dict]:
    """The metadata ingestion stores for each chunk of ``SOURCED``, by chunk id."""
    return {
        chunk_id: vector_metadata(
            RagChunk(
                chunk_id=chunk_id,
                document_id=chunk_id,
                namespace="contract",
                title="Tools",
                domain="tea_cultivation",
                position=0,
                content=TEXT,
                source=source,
                file_type="markdown" if source else None,
                section=section,
            )
        )
        for chunk_id, (source, section) in SOURCED.items()
    }


FILTERED = [
    ({"source_prefix": "/kb/docs"}, ["p1", "p2"]),
    ({"source_prefix": "/kb/docs/"}, ["p1", "p2"]),
    ({"source_prefix": "/kb/docs/a.md"}, ["p1"]),
    ({"source_prefix": "/kb/doc"}, []),
    ({"source_prefix": "/"}, ["p1", "p2", "p3"]),
    ({"source_prefix": "https://example.com"}, ["p4"]),
    ({"section": "Install"}, ["p1", "p3", "p5"]),
    ({"section": "Install > Linux"}, ["p2"]),
    ({"section": "Linux"}, []),
    ({"source_prefix": "/kb", "section": "Install"}, ["p1", "p3"]),
    ({"source_prefix": "/kb", "domains": ("plant_diseases",)}, []),
]
"""A query's provenance filters and the chunks of ``SOURCED`` they keep, sorted."""


def provenance_filter(fields: dict) -> dict | None:
    return query_filter(RetrievalQuery(query=TEXT, **fields))
