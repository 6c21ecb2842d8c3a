"""PDFs to markdown: page markers, the title of the document information, and headings from
the outline or from font sizes, on PDFs written by hand (``retrieval_testkit.sample_files``)."""

from __future__ import annotations

import re

import pytest

from retrieval.adapters.files.converters import convert, pdf_to_markdown
from retrieval.domain.chunking import chunk_markdown
from retrieval.errors import InvalidRequestError
from retrieval_testkit.sample_files import Bookmark, PdfPage, pdf, pdf_document

MITES = "Red spider mites feed on the underside of mature leaves, which turn bronze and fall."
BUGS = "Tea mosquito bugs suck the sap of tender shoots and leave dark, shrunken lesions behind."
BLIGHT = "Blister blight spreads in cool, wet weather and blisters the youngest leaves of a bush."
BODY = 11


def markdown_of(pages: list[PdfPage], **options) -> str:
    return pdf_to_markdown(pdf_document(pages, **options)).markdown


def headings(markdown: str) -> list[str]:
    return re.findall(r"^#+ .*$", markdown, re.MULTILINE)


def test_each_page_follows_its_marker_and_a_page_without_text_has_none() -> None:
    markdown = markdown_of([[(BODY, MITES)], [], [(BODY, BUGS), (BODY, BLIGHT)]])
    assert markdown == f"<!-- page 1 -->\n\n{MITES}\n\n<!-- page 3 -->\n\n{BUGS}\n{BLIGHT}"


def test_a_page_without_text_keeps_its_bookmark() -> None:
    outline = [Bookmark(1, "Sucking pests", 1)]
    assert markdown_of([[(BODY, MITES)], [], [(BODY, BUGS)]], outline=outline) == (
        f"<!-- page 1 -->\n\n{MITES}\n\n<!-- page 2 -->\n\n## Sucking pests\n\n"
        f"<!-- page 3 -->\n\n{BUGS}"
    )


def test_the_one_page_builder_still_gives_its_lines() -> None:
    converted = pdf_to_markdown(pdf("Frost (ground) damage", "Cover young bushes."))
    assert converted == pdf_to_markdown(
        pdf_document([[(12, "Frost (ground) damage"), (12, "Cover young bushes.")]])
    )
    assert converted.markdown == "<!-- page 1 -->\n\nFrost (ground) damage\nCover young bushes."
    assert converted.title is None


@pytest.mark.parametrize(
    "data",
    [
        pdf(),
        pdf_document([[], []]),
        pdf_document([[], []], title="Scanned report", outline=[Bookmark(1, "Scans", 0)]),
    ],
    ids=["one-page", "two-pages", "outline-and-title"],
)
def test_a_pdf_without_text_is_refused(data: bytes) -> None:
    with pytest.raises(InvalidRequestError, match="no extractable text"):
        convert(".pdf", data)


@pytest.mark.parametrize(
    ("given", "read"),
    [
        ("Pests of tea in Assam", "Pests of tea in Assam"),
        ("  Pests of tea\n in Assam ", "Pests of tea in Assam"),
        ("Thé vert: récolte 2024", "Thé vert: récolte 2024"),
        ("The untitled garden", "The untitled garden"),
        ("", None),
        ("   ", None),
        ("Microsoft Word - pests.docx", None),
        ("untitled", None),
        ("Untitled-3", None),
        ("Document1", None),
        ("C:\\reports\\pests final.pdf", None),
        ("2024-03", None),
    ],
)
def test_the_title_is_the_document_information_title_unless_a_placeholder(
    given: str, read: str | None
) -> None:
    assert pdf_to_markdown(pdf_document([[(BODY, MITES)]], title=given)).title == read


def test_a_pdf_without_document_information_has_no_title() -> None:
    assert pdf_to_markdown(pdf_document([[(BODY, MITES)]])).title is None


def test_a_damaged_outline_or_document_information_costs_itself_not_the_text() -> None:
    whole = pdf_document(
        [[(20, "Pests of tea"), (BODY, MITES)]], title="Tea", outline=[Bookmark(1, "Mites", 0)]
    )
    damaged = whole.replace(b"<< /Type /Outlines", b"\x13< /Type /Outlines").replace(
        b"<< /Title <FEFF0054", b"\x13< /Title <FEFF0054"
    )
    assert len(damaged) == len(whole)
    converted = pdf_to_markdown(damaged)
    assert converted.title is None
    # No outline to read, so the headings come from the font sizes.
    assert converted.markdown == f"<!-- page 1 -->\n\n## Pests of tea\n\n{MITES}"


def test_outline_entries_become_headings_where_their_titles_are_shown() -> None:
    pages = [
        [(BODY, "Pests of tea"), (BODY, MITES)],
        [(BODY, BUGS), (BODY, "2.1 Mites"), (BODY, MITES)],
    ]
    outline = [Bookmark(1, "Pests of tea", 0), Bookmark(2, "Mites", 1)]
    assert markdown_of(pages, outline=outline) == (
        f"<!-- page 1 -->\n\n## Pests of tea\n\n{MITES}\n\n"
        f"<!-- page 2 -->\n\n{BUGS}\n\n### 2.1 Mites\n\n{MITES}"
    )


def test_an_outline_entry_whose_title_is_not_shown_heads_its_page() -> None:
    pages = [[(BODY, MITES)], [(BODY, BUGS), (BODY, BLIGHT)]]
    outline = [Bookmark(1, "Pests", 0), Bookmark(2, "Sucking pests", 1)]
    assert markdown_of(pages, outline=outline) == (
        f"<!-- page 1 -->\n\n## Pests\n\n{MITES}\n\n"
        f"<!-- page 2 -->\n\n### Sucking pests\n\n{BUGS}\n{BLIGHT}"
    )


def test_an_outline_title_wrapped_over_two_lines_is_one_heading() -> None:
    pages = [[(16, "Integrated management of"), (16, "tea pests"), (BODY, MITES)]]
    markdown = markdown_of(pages, outline=[Bookmark(1, "Integrated management of tea pests", 0)])
    assert headings(markdown) == ["## Integrated management of tea pests"]
    assert markdown.count("tea pests") == 1


def test_outline_levels_go_down_from_two_and_the_outline_wins_over_sizes() -> None:
    pages = [
        [(24, "Tea pests"), (BODY, "Mites"), (BODY, MITES), (BODY, "Spider mites")],
        [(BODY, "Scarlet mites"), (BODY, "Bugs"), (BODY, BUGS)],
    ]
    outline = [
        Bookmark(1, "Mites", 0),
        Bookmark(2, "Spider mites", 0),
        Bookmark(2, "Scarlet mites", 1),
        Bookmark(1, "Bugs", 1),
    ]
    assert headings(markdown_of(pages, outline=outline)) == [
        "## Mites",
        "### Spider mites",
        "### Scarlet mites",
        "## Bugs",
    ]


@pytest.mark.parametrize("sized_by_matrix", [False, True], ids=["font-size", "text-matrix"])
def test_without_an_outline_larger_short_lines_become_headings(sized_by_matrix: bool) -> None:
    pages = [
        [(20, "Pests of tea"), (BODY, MITES), (14, "Red spider mite"), (BODY, MITES)],
        [(BODY, BLIGHT), (14, "Tea mosquito bug"), (BODY, BUGS), (BODY, BLIGHT)],
    ]
    assert markdown_of(pages, sized_by_matrix=sized_by_matrix) == (
        f"<!-- page 1 -->\n\n## Pests of tea\n\n{MITES}\n\n### Red spider mite\n\n{MITES}\n\n"
        f"<!-- page 2 -->\n\n{BLIGHT}\n\n### Tea mosquito bug\n\n{BUGS}\n{BLIGHT}"
    )


def test_a_heading_wrapped_over_lines_of_one_size_is_one_heading() -> None:
    pages = [[(18, "Diseases of the tea bush"), (18, "in north-east India"), (BODY, BLIGHT)]]
    assert headings(markdown_of(pages)) == ["## Diseases of the tea bush in north-east India"]


def test_body_text_stays_text() -> None:
    pages = [
        [
            (BODY, "Pests"),
            (BODY, MITES),
            (12, "Barely larger"),
            (BODY, BUGS),
            (14, f"{MITES} {BUGS}"),
            (14, f"{BLIGHT} {MITES}"),
            (14, "A larger lead paragraph ends here."),
            (BODY, BLIGHT),
            (16, "Mites . . . . . . . . 3"),
            (16, "1994"),
            (BODY, BUGS),
        ],
        [(20, "0"), (20, "5"), (20, "10"), (20, "Mites"), (BODY, MITES)],
    ]
    assert headings(markdown_of(pages)) == []


def test_a_heading_is_written_once() -> None:
    for markdown in (
        markdown_of([[(16, "Spider mite damage"), (BODY, MITES)]]),
        markdown_of(
            [[(BODY, "Spider mite damage"), (BODY, MITES)]],
            outline=[Bookmark(1, "Spider mite damage", 0)],
        ),
    ):
        assert markdown.count("Spider mite damage") == 1
        assert "## Spider mite damage" in markdown


def test_a_line_reading_as_a_heading_is_escaped_and_its_chunk_shows_it_bare() -> None:
    pages = [[(BODY, MITES), (BODY, "# define MAX_MITES 3"), (BODY, BUGS)]]
    markdown = markdown_of(pages)
    assert "\n\\# define MAX_MITES 3\n" in markdown
    assert headings(markdown) == []
    (chunk,) = chunk_markdown("Mite counts", markdown)
    assert chunk.body == f"{MITES}\n# define MAX_MITES 3\n{BUGS}"
    assert chunk.section == ""


def test_the_chunker_heads_chunks_with_the_recovered_headings() -> None:
    pages = [
        [(20, "Pests of tea"), (BODY, MITES), (14, "Sucking pests"), (BODY, BUGS)],
        [(13, "Blister blight"), (BODY, BLIGHT)],
    ]
    converted = pdf_to_markdown(pdf_document(pages, title="Tea field guide"))
    assert converted.title == "Tea field guide"
    chunks = chunk_markdown(converted.title, converted.markdown)
    breadcrumbs = {
        text: chunk.breadcrumb
        for chunk in chunks
        for text in (MITES, BUGS, BLIGHT)
        if text in chunk.body
    }
    assert breadcrumbs == {
        MITES: "Tea field guide > Pests of tea",
        BUGS: "Tea field guide > Pests of tea > Sucking pests",
        BLIGHT: "Tea field guide > Pests of tea > Sucking pests > Blister blight",
    }
