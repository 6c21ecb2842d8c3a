"""Sources: normalised, matched by path segment, and the ledger's identity rule."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from retrieval.domain.ledger import DocumentRecord, DocumentState, Provenance
from retrieval.domain.models import RagDocument, RetrievalQuery
from retrieval.domain.provenance import Source, is_under, page_span, source_prefixes
from retrieval.errors import DocumentIdClashError

SEGMENTS = st.lists(
    st.text("abc-_.", min_size=1, max_size=4).filter(lambda s: s.strip(".")), max_size=5
)


def provenance(uri: str | None) -> Provenance:
    return Provenance(
        title="T", source=Source(uri=uri) if uri else None, written_at=datetime.now(UTC)
    )


@pytest.mark.parametrize(
    ("given_", "stored"),
    [
        ("/kb/docs/../a.md", "/kb/a.md"),
        ("/kb//docs/./a.md", "/kb/docs/a.md"),
        ("/kb/docs/", "/kb/docs"),
        ("https://example.com/docs/../a.html?x=1", "https://example.com/a.html?x=1"),
        ("https://example.com/", "https://example.com"),
        ("C:\\kb\\a.md", "C:/kb/a.md"),
    ],
)
def test_a_source_is_stored_normalised(given_: str, stored: str) -> None:
    assert Source(uri=given_).uri == stored


@pytest.mark.parametrize("bad", ["", "docs/a.md", "a.md", "/a\x00b", "/a\nb", "/" + "a" * 3000])
def test_a_relative_or_malformed_source_is_refused(bad: str) -> None:
    with pytest.raises(ValidationError):
        Source(uri=bad)


def test_a_bare_string_is_a_documents_source() -> None:
    document = RagDocument(
        document_id="a", title="A", domain="plant_diseases", content="x", source="/kb/a.md"
    )
    assert document.source == Source(uri="/kb/a.md")


def test_prefixes_are_whole_segments() -> None:
    assert source_prefixes("/kb/docs/a.md") == ["/", "/kb", "/kb/docs", "/kb/docs/a.md"]
    assert is_under("/kb/docs/a.md", "/kb/docs")
    assert is_under("/kb/docs/a.md", "/kb/docs/a.md")
    assert not is_under("/kb/docs-old/a.md", "/kb/docs")
    assert not is_under("/kb/doc", "/kb/docs")
    assert not is_under(None, "/")


def test_url_prefixes_start_at_the_origin() -> None:
    assert source_prefixes("https://ex.com/docs/a.html") == [
        "https://ex.com",
        "https://ex.com/docs",
        "https://ex.com/docs/a.html",
    ]
    assert not is_under("https://ex.com.evil/docs", "https://ex.com")


@given(SEGMENTS, SEGMENTS)
def test_under_is_exactly_segment_prefix(head: list[str], tail: list[str]) -> None:
    parent = "/" + "/".join(head)
    child = Source(uri="/" + "/".join([*head, *tail])).uri
    assert is_under(child, Source(uri=parent).uri)
    if tail:
        sibling = Source(uri=f"{parent}/{tail[0]}x").uri
        assert not is_under(sibling, Source(uri=f"{parent}/{tail[0]}").uri)


def test_a_query_filters_on_a_normalised_prefix() -> None:
    assert RetrievalQuery(query="q", source_prefix="/kb/docs/").source_prefix == "/kb/docs"
    with pytest.raises(ValidationError):
        RetrievalQuery(query="q", source_prefix="docs")


def test_page_spans() -> None:
    assert page_span(()) == ""
    assert page_span((3,)) == "p. 3"
    assert page_span((3, 4, 5)) == "pp. 3-5"


def committed(uri: str | None) -> DocumentRecord:
    return DocumentRecord(namespace="n", document_id="README", state=DocumentState.COMMITTED,
                          provenance=provenance(uri))  # fmt: skip


def test_another_source_clashes_and_the_error_names_both() -> None:
    clash = committed("/x/pkgA/README.md").clash("/x/pkgB/README.md")
    assert isinstance(clash, DocumentIdClashError)
    assert "/x/pkgA/README.md" in str(clash)
    assert "/x/pkgB/README.md" in str(clash)
    assert "--replace" in str(clash)


def test_the_same_source_a_record_before_provenance_and_a_new_record_never_clash() -> None:
    assert committed("/x/a.md").clash("/x/a.md") is None
    assert DocumentRecord(namespace="n", document_id="a", state=DocumentState.COMMITTED,
                          chunk_ids=("a#0000-x",)).clash("/x/a.md") is None  # fmt: skip
    assert DocumentRecord(namespace="n", document_id="a").clash("/x/a.md") is None


def test_a_document_without_a_source_clashes_with_one_from_a_file() -> None:
    assert committed("/x/a.md").clash(None) is not None
    assert committed(None).clash("/x/a.md") is not None


def test_a_pending_write_keeps_both_sources_until_it_ends() -> None:
    pending = committed("/x/old.md").begin(["README#0000-a"], "f", provenance("/x/new.md"))
    assert pending.clash("/x/old.md") is None
    assert pending.clash("/x/new.md") is None
    assert pending.abandon().source == "/x/old.md"
    assert pending.commit().source == "/x/new.md"
    assert pending.commit().clash("/x/old.md") is not None
