"""What a chunk says of where it comes from: plain headings, its section, its pages."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.domain.chunking import chunk_markdown
from retrieval.domain.chunking_sections import page_marker, plain_heading, split_sections


@pytest.mark.parametrize(
    ("heading", "plain"),
    [
        ("[Comments](#comments)", "Comments"),
        ("[`Debug` for Programmer Output](#debug)", "Debug for Programmer Output"),
        ("Defining the page\\_title Function", "Defining the page_title Function"),
        ("The *tests* Directory", "The tests Directory"),
        ("**Bold**, __strong__, _em_ and ***both***", "Bold, strong, em and both"),
        ("**bold *and italic***", "bold and italic"),
        ("[**Linked** words](https://example.com/a_(b)_c)", "Linked words"),
        ("Catch-All Patterns and the `_` Placeholder", "Catch-All Patterns and the _ Placeholder"),
        ("`a * b * c` and `__init__`", "a * b * c and __init__"),
        ("snake_case_name and 2 * 3", "snake_case_name and 2 * 3"),
        ("Install ![logo](logo.png) Guide", "Install Guide"),
        ("[![build](badge.svg)](ci) Status", "Status"),
        ("See [the docs][docs]", "See the docs"),
        ("Setup {#setup}", "Setup"),
        ("  Lots   of\twhite   space ", "Lots of white space"),
        ("C# and 1 \\* 2", "C# and 1 * 2"),
    ],
)
def test_a_heading_is_read_as_plain_text(heading: str, plain: str) -> None:
    assert plain_heading(heading) == plain


def test_a_closing_run_of_hashes_goes_but_a_hash_in_a_word_stays() -> None:
    sections = split_sections("Languages", "## C# ##\n\nOne.\n\n## F#\n\nTwo.")
    assert [s.breadcrumb for s in sections] == ["Languages > C#", "Languages > F#"]


def test_the_section_is_the_plain_heading_path_below_the_title() -> None:
    markdown = (
        "Before any heading.\n\n# Tea\n\nUnder the title.\n\n## [Pests](#pests)\n\nMites.\n\n"
        "### `Control`\n\nSpray.\n\n## Soil\n\npH."
    )
    chunks = chunk_markdown("Tea", markdown)
    assert [(c.breadcrumb, c.section) for c in chunks] == [
        ("Tea", ""),
        ("Tea", ""),
        ("Tea > Pests", "Pests"),
        ("Tea > Pests > Control", "Pests > Control"),
        ("Tea > Soil", "Soil"),
    ]


def test_the_title_is_used_as_given() -> None:
    chunks = chunk_markdown("**Tea** [guide](x)", "## Soil\n\npH.")
    assert chunks[0].breadcrumb == "**Tea** [guide](x) > Soil"
    assert chunks[0].section == "Soil"


def test_a_document_without_page_markers_has_no_pages() -> None:
    assert chunk_markdown("Tea", "## Soil\n\npH.")[0].pages == ()


def test_page_markers_are_dropped_and_a_paragraph_over_a_page_boundary_is_on_both() -> None:
    markdown = f"Intro.\n\n{page_marker(2)}\n\nOne two\n{page_marker(3)}\nthree four."
    chunks = chunk_markdown("Tea", markdown)
    assert [(c.body, c.pages) for c in chunks] == [("Intro.\n\nOne two\nthree four.", (1, 2, 3))]


def test_each_chunk_has_the_pages_of_its_own_text() -> None:
    markdown = f"Intro here.\n\n{page_marker(2)}\nSecond page.\n\n{page_marker(5)}\n\nFifth page."
    chunks = chunk_markdown("Tea", markdown, max_words=2, overlap_words=0)
    assert [(c.body, c.pages) for c in chunks] == [
        ("Intro here.", (1,)),
        ("Second page.", (2,)),
        ("Fifth page.", (5,)),
    ]


def test_the_overlap_brings_its_page_along() -> None:
    markdown = f"one two three four\n{page_marker(2)}\nfive six seven eight"
    chunks = chunk_markdown("Tea", markdown, max_words=6, overlap_words=2)
    assert [(c.body, c.overlap_words, c.pages) for c in chunks] == [
        ("one two three four", 0, (1,)),
        ("three four\nfive six seven eight", 2, (1, 2)),
    ]


def test_a_page_marker_inside_fenced_code_is_dropped_too() -> None:
    markdown = f"```\nfirst\n{page_marker(7)}\nsecond\n```"
    chunks = chunk_markdown("Tea", markdown)
    assert [(c.body, c.pages) for c in chunks] == [("```\nfirst\nsecond\n```", (1, 7))]


PAGED_WORD = re.compile(r"(?:```)?p(\d+)w\d+\.?")
"""A word that names its page (a fence's opening line has one as its info string)."""


@st.composite
def paged_documents(draw: st.DrawFn) -> str:
    """A markdown text of prose and fenced code whose words name their page, with page markers
    between any two lines, fences included (but never right before a closing one, which would
    be text of that page without a word to say so; for the same reason fenced code has no
    blank lines or headings)."""
    page = 1
    numbers = itertools.count()
    lines: list[str] = []
    fenced = False
    items = st.sampled_from(["line", "line", "line", "blank", "marker", "fence", "heading"])
    for item in draw(st.lists(items, min_size=1, max_size=80)):
        words = " ".join(f"p{page}w{next(numbers)}" for _ in range(draw(st.integers(1, 8))))
        if item == "marker":
            page = draw(st.integers(1, 30))
            lines.append(page_marker(page))
        elif item == "line" or (item == "fence" and fenced and lines[-1].startswith("<!--")):
            lines.append(words + draw(st.sampled_from(["", "."])))
        elif item == "fence":
            lines.append("```" if fenced else f"```p{page}w{next(numbers)}")
            fenced = not fenced
        elif not fenced:
            lines.append({"blank": "", "heading": "## Part"}[item])
    return "\n".join(lines)


def pages_of(words: list[str]) -> set[int]:
    return {int(found[1]) for word in words if (found := PAGED_WORD.fullmatch(word))}


@settings(max_examples=200, deadline=None)
@given(paged_documents(), st.integers(12, 60), st.integers(0, 20), st.integers(100, 1500))
def test_every_chunk_has_the_pages_its_text_came_from(
    markdown: str, max_words: int, overlap: int, max_chars: int
) -> None:
    paged = "<!-- page" in markdown
    chunks = chunk_markdown(
        "Title", markdown, max_words=max_words, overlap_words=overlap, max_chars=max_chars
    )
    seen: set[str] = set()
    kept: list[str] = []
    for chunk in chunks:
        assert "<!--" not in chunk.body
        words = chunk.body.split()
        # A fence opened again repeats its opening line, which is not text of this chunk.
        new = [word for word in words[chunk.overlap_words :] if word not in seen]
        assert chunk.pages == (
            tuple(sorted(pages_of(words[: chunk.overlap_words] + new))) if paged else ()
        )
        seen.update(words)
        kept.extend(word for word in new if PAGED_WORD.fullmatch(word))
    assert kept == [word for word in markdown.split() if PAGED_WORD.fullmatch(word)]


def test_a_line_escaped_from_reading_as_a_heading_is_text_without_its_escape() -> None:
    markdown = (
        "## Constants\n\nThe header reads:\n\\# define MAX_MITES 3\n\\## not a heading\n\n"
        "```c\n\\# define KEPT_IN_CODE 1\n```\n\n\\#include and \\# inside keep theirs."
    )
    (section,) = split_sections("Spec", markdown)
    assert section.breadcrumb == "Spec > Constants"
    assert section.paragraphs == (
        "The header reads:\n# define MAX_MITES 3\n## not a heading",
        "```c\n\\# define KEPT_IN_CODE 1\n```",
        "\\#include and \\# inside keep theirs.",
    )
