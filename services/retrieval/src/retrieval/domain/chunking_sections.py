"""A markdown document read into sections: the first step of chunking (``chunking``).

A document is cut at its headings into sections, and a section at its blank lines into
paragraphs. Fenced code (a line of three or more backticks or tildes, indented or not, up to
a line of at least as many of the same) is read as in CommonMark: inside it no line is a
heading and a blank line does not end the paragraph; a block left open runs to the end of
the document, where it is closed.

A line of text that would read as a heading (``# define``: a PDF's text) is written with a
backslash before it (``text_line``), as CommonMark escapes it: the reader takes it for text and
drops the backslash, so a chunk shows the line as the source does.

Each section has its breadcrumb (document title > section headings), which tells the
embedding model what its chunks are about. Headings are read as plain text
(``plain_heading``); the title is used as given, and a heading equal to it is left out. A
section also says its heading path (the headings below the title), both cut to
``MAX_BREADCRUMB_CHARS``, and where the source's pages begin in each paragraph: a converter
(PDF) writes a ``page_marker`` line where each page begins, the reader drops those lines,
and text before the first marker is on page 1.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

HEADING = re.compile(r"^(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
FENCE = re.compile(r"^\s*(?P<marker>`{3,}(?=[^`]*$)|~{3,})")
"""A line that opens a fenced code block (an info string after backticks has none)."""
BREADCRUMB_SEPARATOR = " > "
MAX_BREADCRUMB_CHARS = 512
"""The most characters of a chunk's breadcrumb (a document title may have as many)."""
HEADING_CHARS = 4 * MAX_BREADCRUMB_CHARS
"""The most characters of a heading read: room for markup around a breadcrumb's worth of text,
and a bound on the time spent on one."""
PAGE_MARKER = re.compile(r"^<!-- page (\d+) -->$")
"""A line a converter puts where a page of the source begins (PDF); never part of a chunk."""


LITERAL = re.compile(r"(?<!`)(`+)([^`]+)\1(?!`)|\\([!-/:-@\[-`{-~])")
"""A code span or a backslash-escaped punctuation mark: text in which no markup is read."""
IMAGE = re.compile(r"!\[[^\]]*\](?:\((?:[^()]|\([^()]*\))*\)|\[[^\]]*\])")
LINK = re.compile(r"\[([^\]]*)\](?:\((?:[^()]|\([^()]*\))*\)|\[[^\]]*\])")
EMPHASIS = re.compile(
    r"(\*{1,3})(?=[^\s*])([^*]*?[^\s*])\1|(?<!\w)(_{1,3})(?=[^\s_])([^_]*?[^\s_])\3(?!\w)"
)
ANCHOR = re.compile(r"\s*\{#[^}]*\}\s*$")
KEPT = re.compile(r"\0(\d+)\0")
"""Where ``plain_heading`` set a literal aside while it reads the markup around it."""


def page_marker(page: int) -> str:
    """The line that says page ``page`` (1-based) of the source begins here."""
    return f"<!-- page {page} -->"


def text_line(text: str) -> str:
    """``text`` as a markdown line read as text: escaped where it would read as a heading."""
    return "\\" + text if HEADING.match(text) else text


def unescaped(line: str) -> str:
    """A line read as text, without the escape ``text_line`` put before it."""
    return line[1:] if line.startswith("\\") and HEADING.match(line[1:]) else line


def plain_heading(text: str) -> str:
    """A heading's text without markdown: a link gives its text, an image is dropped, code and
    emphasis marks and backslash escapes go, so does a trailing ``{#id}``, and each run of
    whitespace becomes one space."""
    literals: list[str] = []

    def set_aside(found: re.Match[str]) -> str:
        literals.append(found[2] if found[1] else found[3])
        return f"\0{len(literals) - 1}\0"

    text = LITERAL.sub(set_aside, ANCHOR.sub("", text.replace("\0", "")))
    text = LINK.sub(r"\1", IMAGE.sub("", text))
    while (plainer := EMPHASIS.sub(lambda found: found[2] or found[4], text)) != text:
        text = plainer
    return " ".join(KEPT.sub(lambda found: literals[int(found[1])], text).split())


class PageStart(NamedTuple):
    """Where in a text a page of the source begins."""

    offset: int
    page: int


@dataclass(frozen=True, slots=True)
class Fence:
    """The fence of a fenced code block."""

    opening: str
    """Its opening line without indent (fence and info string), to open the block again."""
    marker: str
    """Its run of backticks or tildes; a line of at least as many of them closes the block."""

    @classmethod
    def opened_by(cls, line: str) -> Fence | None:
        found = FENCE.match(line)
        return cls(line.strip(), found["marker"]) if found else None

    def closed_by(self, line: str) -> bool:
        closing = line.strip()
        return len(closing) >= len(self.marker) and closing.count(self.marker[0]) == len(closing)


@dataclass(frozen=True, slots=True)
class Section:
    breadcrumb: str
    paragraphs: tuple[str, ...]
    heading_path: str
    """The plain headings below the document title, joined by ``BREADCRUMB_SEPARATOR``."""
    page_starts: tuple[tuple[PageStart, ...], ...]
    """For each paragraph, where in it each of its pages begins (none without page markers)."""


class _SectionReader:
    """Sections built from a document's lines: headings start them, blank lines outside
    fenced code end their paragraphs."""

    def __init__(self, title: str) -> None:
        self.title = title
        self.path: list[tuple[int, str]] = []
        self.sections: list[Section] = []
        self.paragraphs: list[tuple[str, tuple[PageStart, ...]]] = []
        self.lines: list[str] = []
        self.page_changes: list[tuple[int, int]] = []
        """Where (the index of a line) each page of the paragraph begins."""

    def heading(self, level: int, text: str) -> None:
        self.end_section()
        self.path = [(lvl, crumb) for lvl, crumb in self.path if lvl < level]
        self.path.append((level, text))

    def line(self, text: str, page: int | None) -> None:
        if page is not None and (not self.page_changes or self.page_changes[-1][1] != page):
            self.page_changes.append((len(self.lines), page))
        self.lines.append(text)

    def end_paragraph(self) -> None:
        if self.lines:
            self.paragraphs.append(_paragraph(self.lines, self.page_changes))
            self.lines, self.page_changes = [], []

    def end_section(self) -> None:
        self.end_paragraph()
        if self.paragraphs:
            headings = [text for _, text in self.path if text and text != self.title]
            breadcrumb = BREADCRUMB_SEPARATOR.join([self.title, *headings])
            heading_path = BREADCRUMB_SEPARATOR.join(headings)
            texts, page_starts = zip(*self.paragraphs, strict=True)
            self.sections.append(
                Section(
                    breadcrumb[:MAX_BREADCRUMB_CHARS],
                    texts,
                    heading_path[:MAX_BREADCRUMB_CHARS],
                    page_starts,
                )
            )
            self.paragraphs = []


def _paragraph(
    lines: Sequence[str], page_changes: Sequence[tuple[int, int]]
) -> tuple[str, tuple[PageStart, ...]]:
    """A paragraph's lines as its text, stripped, and where in it each page begins, from the
    line each begins with."""
    texts = [lines[0].lstrip(), *lines[1:]]
    texts[-1] = texts[-1].rstrip()
    starts: list[PageStart] = []
    offset = counted = 0
    for index, page in page_changes:
        offset += sum(len(text) + 1 for text in texts[counted:index])
        counted = index
        starts.append(PageStart(offset, page))
    return "\n".join(texts), tuple(starts)


def split_sections(title: str, markdown: str) -> list[Section]:
    """Sections of a markdown text, each with the heading path leading to it. Headings are read
    outside fenced code only; page markers are dropped, each line keeping its page."""
    lines = markdown.splitlines()
    paged = "<!-- page " in markdown and any(PAGE_MARKER.match(line) for line in lines)
    page = 1 if paged else None
    reader = _SectionReader(title)
    fence: Fence | None = None
    for line in lines:
        if marker := PAGE_MARKER.match(line):
            page = int(marker[1])
        elif fence:
            reader.line(line, page)
            fence = None if fence.closed_by(line) else fence
        elif heading := HEADING.match(line):
            reader.heading(len(heading[1]), plain_heading(heading[2][:HEADING_CHARS]))
        elif not line.strip():
            reader.end_paragraph()
        else:
            reader.line(unescaped(line), page)
            fence = Fence.opened_by(line)
    if fence:
        reader.line(fence.marker, None)  # on the page of the line before it
    reader.end_section()
    return reader.sections
