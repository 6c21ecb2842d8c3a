"""Chunker properties on markdown with fenced code: fences balance in every chunk, lines come
back whole and in order, and the overlap repeats the end of the chunk before as it stands."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.domain.chunking import TextChunk, chunk_markdown, chunk_section
from retrieval.domain.chunking_sections import split_sections

PROSE = re.compile(r"[a-j .]+")
"""A line of prose as generated here; no line of code looks like one."""
FENCE_LINE = re.compile(r"(`{3,}|~{3,})\w*")
OPENING = re.compile(r"\s*(`{3,}(?=[^`]*$)|~{3,})")

prose_line = st.lists(
    st.text(alphabet="abcdefghij", min_size=1, max_size=8), min_size=1, max_size=8
)
code_token = st.sampled_from(["let", "x", "=", "1;", "#", "{", "}", "fn", "main()", "//", "`x`"])
long_code_token = st.one_of(code_token, st.text(alphabet="xyz", min_size=20, max_size=2500))


@st.composite
def fenced_documents(draw: st.DrawFn, long_lines: bool = False) -> tuple[str, list[str]]:
    """A markdown text of headings, prose and fenced code (blank lines and ``#`` lines inside,
    the last block maybe left open), and its body lines in order (blank ones left out)."""
    tokens = long_code_token if long_lines else code_token
    lines: list[str] = []
    body: list[str] = []
    kinds = st.sampled_from(["heading", "prose", "code", "open code"])
    for kind in draw(st.lists(kinds, min_size=1, max_size=12)):
        if kind == "heading":
            lines.append(draw(st.sampled_from(["## Usage", "### Detail", "# Title"])))
            continue
        if kind == "prose":
            paragraph = draw(st.lists(prose_line, min_size=1, max_size=10))
            block = [" ".join(words) + "." for words in paragraph]
        else:
            marker = draw(st.sampled_from(["```", "~~~", "````"]))
            indent = st.sampled_from(["", "    ", "\t"])
            words = st.lists(tokens, min_size=1, max_size=60 if long_lines else 6).map(" ".join)
            content = st.one_of(st.just(""), st.tuples(indent, words).map("".join))
            if marker != "```":
                content = st.one_of(content, st.just("```"))
            info = draw(st.sampled_from(["", "rust", "python", "sh"]))
            block = [marker + info, *draw(st.lists(content, max_size=30))]
            if kind == "code":
                block.append(marker)
        lines.extend(block)
        body.extend(line for line in block if line.strip())
        if kind == "open code":
            break
        if draw(st.booleans()):
            lines.append("")
    return "\n".join(lines), body


def read_fences(text: str) -> tuple[list[tuple[str, bool]], bool]:
    """Each line of ``text`` but its fences with whether it is inside fenced code (as in
    CommonMark), and whether every block the text opens it closes."""
    marker = None
    read: list[tuple[str, bool]] = []
    for line in text.split("\n"):
        closing = line.strip()
        if marker is None and (opened := OPENING.match(line)):
            marker = opened[1]
        elif marker and set(closing) == {marker[0]} and len(closing) >= len(marker):
            marker = None
        else:
            read.append((line, marker is not None))
    return read, marker is None


def new_text(chunk: TextChunk) -> str:
    """A chunk's body after the overlap it repeats from the chunk before."""
    words = list(re.finditer(r"\S+", chunk.body))
    return chunk.body[words[chunk.overlap_words - 1].end() :] if chunk.overlap_words else chunk.body


# The Rust book's page on comments (ch03-04), as html_to_markdown converts it.
RUST_BOOK_COMMENTS = """## [Comments](#comments)

All programmers strive to make their code easy to understand, but sometimes
extra explanation is warranted. In these cases, programmers leave *comments* in
their source code that the compiler will ignore but that people reading the
source code may find useful.

Here's a simple comment:

```rust
// hello, world
```

In Rust, the idiomatic comment style starts a comment with two slashes, and the
comment continues until the end of the line. For comments that extend beyond a
single line, you'll need to include `//` on each line, like this:

```rust
// So we're doing something complicated here, long enough that we need
// multiple lines of comments to do it! Whew! Hopefully, this comment will
// explain what's going on.
```

Comments can also be placed at the end of lines containing code:

Filename: src/main.rs

```rust
fn main() {
    let lucky_number = 7; // I'm feeling lucky today
}
```

But you'll more often see them used in this format, with the comment on a
separate line above the code it's annotating:

Filename: src/main.rs

```rust
fn main() {
    // I'm feeling lucky today
    let lucky_number = 7;
}
```

Rust also has another kind of comment, documentation comments, which we'll
discuss in the [“Publishing a Crate to Crates.io”](ch14-02-publishing-to-crates-io.html)
section of Chapter 14."""


def test_the_rust_book_page_on_comments_keeps_its_lines_and_fences() -> None:
    chunks = chunk_markdown("Comments - The Rust Programming Language", RUST_BOOK_COMMENTS)
    assert len(chunks) == 2
    source_lines = set(RUST_BOOK_COMMENTS.splitlines())
    for chunk in chunks:
        assert read_fences(chunk.body)[1]
        assert set(chunk.body.split("\n")) <= source_lines | {""}


def test_a_blank_line_inside_a_fence_does_not_end_the_paragraph() -> None:
    code = "```python\nx = 1\n\n\ny = 2\n```"
    assert split_sections("Code", f"Before.\n\n{code}\n\nAfter.")[0].paragraphs == (
        "Before.",
        code,
        "After.",
    )


def test_a_comment_line_inside_a_fence_is_no_heading() -> None:
    markdown = "## Setup\n\n```sh\n# install it\npip install tea\n```\n\nDone."
    sections = split_sections("Tea", markdown)
    assert [s.breadcrumb for s in sections] == ["Tea > Setup"]
    assert sections[0].paragraphs == ("```sh\n# install it\npip install tea\n```", "Done.")


def test_a_fenced_block_longer_than_a_chunk_is_closed_and_opened_again_at_a_line() -> None:
    code = [f"let x{n} = {n};" for n in range(60)]
    fenced = "\n".join(["```rust", *code, "```"])
    chunks = chunk_markdown("Code", f"Intro.\n\n{fenced}\n\nOutro.", max_words=50, overlap_words=10)
    assert len(chunks) > 4
    assert chunks[0].body.startswith("Intro.\n\n```rust\nlet x0 = 0;\n")
    for chunk in chunks[:-1]:
        assert chunk.body.endswith(";\n```")
    for chunk in chunks[1:]:
        assert chunk.body.startswith("```rust\nlet x")
        assert chunk.overlap_words == 0
    assert chunks[-1].body.endswith(";\n```\n\nOutro.")
    lines = [line for chunk in chunks for line in chunk.body.split("\n")]
    assert [line for line in lines if line.startswith("let ")] == code
    assert all(read_fences(chunk.body)[1] for chunk in chunks)


@pytest.mark.parametrize(
    ("opening", "fence"), [("~~~python", "~~~"), ("````", "````"), ("```rust,ignore", "```")]
)
def test_a_block_is_opened_again_with_its_own_fence_and_info_string(
    opening: str, fence: str
) -> None:
    code = "\n".join([opening, *(f"print({n})" for n in range(40)), fence])
    chunks = chunk_markdown("Code", code, max_words=20, overlap_words=5)
    assert len(chunks) > 1
    assert all(chunk.body.startswith(f"{opening}\nprint(") for chunk in chunks)
    assert all(chunk.body.endswith(f")\n{fence}") for chunk in chunks)


def test_a_block_left_open_is_closed_at_the_end_of_the_document() -> None:
    chunks = chunk_markdown("Tea", "Intro.\n\n```sh\n# not a heading\necho hi")
    assert [chunk.body for chunk in chunks] == ["Intro.\n\n```sh\n# not a heading\necho hi\n```"]


@pytest.mark.parametrize(("overlap_words", "carried"), [(6, "delta.\n\n```\nx = 1\n```"), (4, "")])
def test_the_overlap_takes_a_fenced_block_whole_or_starts_after_it(
    overlap_words: int, carried: str
) -> None:
    markdown = f"alpha beta gamma delta.\n\n```\nx = 1\n```\n\n{' '.join(['omega'] * 25)}"
    chunks = chunk_markdown("Code", markdown, max_words=20, overlap_words=overlap_words)
    assert chunks[0].body == "alpha beta gamma delta.\n\n```\nx = 1\n```"
    assert chunks[1].body.startswith(f"{carried}\n\nomega" if carried else "omega")
    assert chunks[1].overlap_words == len(carried.split())


limits = st.tuples(st.integers(12, 80), st.integers(0, 40), st.integers(120, 2000))


@settings(max_examples=150, deadline=None)
@given(st.one_of(fenced_documents(), fenced_documents(long_lines=True)), limits)
def test_fences_balance_in_every_chunk_and_prose_never_reads_as_code(
    document: tuple[str, list[str]], limit: tuple[int, int, int]
) -> None:
    markdown, _ = document
    max_words, overlap, max_chars = limit
    chunks = chunk_markdown(
        "Title", markdown, max_words=max_words, overlap_words=overlap, max_chars=max_chars
    )
    for chunk in chunks:
        assert len(chunk.body) <= max_chars
        assert len(chunk.body.split()) <= max_words
        lines, balanced = read_fences(chunk.body)
        assert balanced, chunk.body
        for line, inside in lines:
            if line.strip():
                assert bool(PROSE.fullmatch(line)) != inside, (line, chunk.body)


@settings(max_examples=150, deadline=None)
@given(fenced_documents(), st.tuples(st.integers(20, 60), st.integers(0, 30)))
def test_every_body_line_comes_back_whole_and_in_order_and_only_fences_are_added(
    document: tuple[str, list[str]], limit: tuple[int, int]
) -> None:
    markdown, body_lines = document
    max_words, overlap = limit
    chunks = chunk_markdown("Title", markdown, max_words=max_words, overlap_words=overlap)
    expected = iter(body_lines)
    following = next(expected, None)
    for line in (line for chunk in chunks for line in new_text(chunk).split("\n")):
        if line == following:
            following = next(expected, None)
        else:
            assert not line.strip() or FENCE_LINE.fullmatch(line), line
    assert following is None


@settings(max_examples=150, deadline=None)
@given(st.one_of(fenced_documents(), fenced_documents(long_lines=True)), limits)
def test_the_overlap_is_the_end_of_the_chunk_before_as_it_stands(
    document: tuple[str, list[str]], limit: tuple[int, int, int]
) -> None:
    markdown, _ = document
    max_words, overlap, max_chars = limit
    for section in split_sections("Title", markdown):
        chunks = chunk_section(section, max_words, overlap, max_chars)
        assert chunks[0].overlap_words == 0
        for before, after in itertools.pairwise(chunks):
            carried = after.body[: len(after.body) - len(new_text(after))]
            assert before.body.endswith(carried)
            assert after.overlap_words <= min(overlap, max_words // 2)
            assert len(carried) <= max_chars * min(overlap, max_words // 2) // max_words
