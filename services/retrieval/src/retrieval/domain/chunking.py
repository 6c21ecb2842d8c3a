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
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
BREADCRUMB_SEPARATOR = " > "


@dataclass(frozen=True, slots=True)
class TextChunk:
    breadcrumb: str
    body: str
    overlap_words: int

    @property
    def content(self) -> str:
        return f"{self.breadcrumb}\n\n{self.body}"


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
            sections.append(Section(BREADCRUMB_SEPARATOR.join(crumbs), paragraphs))
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


def _pieces(paragraph: str, max_words: int) -> list[str]:
    """The paragraph, or its sentences, or word windows: each at most ``max_words`` words."""
    if len(paragraph.split()) <= max_words:
        return [paragraph]
    pieces: list[str] = []
    for sentence in SENTENCE_END.split(paragraph):
        words = sentence.split()
        pieces.extend(
            " ".join(words[start : start + max_words]) for start in range(0, len(words), max_words)
        )
    return pieces


def chunk_section(section: Section, max_words: int, overlap_words: int) -> list[TextChunk]:
    overlap_words = min(overlap_words, max_words // 2)
    chunks: list[TextChunk] = []
    body = ""
    body_words = carried = 0
    for paragraph in section.paragraphs:
        separator = "\n\n"
        for piece in _pieces(paragraph, max_words - overlap_words):
            size = len(piece.split())
            if body and body_words + size > max_words:
                chunks.append(TextChunk(section.breadcrumb, body, carried))
                body = " ".join(body.split()[-overlap_words:]) if overlap_words else ""
                body_words = carried = len(body.split())
            body = f"{body}{separator}{piece}" if body else piece
            body_words += size
            separator = " "
    if body_words > carried:
        chunks.append(TextChunk(section.breadcrumb, body, carried))
    return chunks


def chunk_markdown(
    title: str, markdown: str, *, max_words: int = 180, overlap_words: int = 30
) -> list[TextChunk]:
    """Chunks of a markdown document in reading order."""
    if max_words < 2:
        raise ValueError("max_words must be at least 2")
    return [
        chunk
        for section in split_sections(title, markdown)
        for chunk in chunk_section(section, max_words, overlap_words)
    ]
