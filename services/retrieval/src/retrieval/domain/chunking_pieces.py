"""A section's paragraphs cut into pieces that fit a chunk: the second step of chunking.

A paragraph longer than a piece's budget of words and characters is cut at sentence ends and
around its fenced blocks, a fenced block at its lines, and a sentence or line that is still
longer at word boundaries; a word longer than the character budget is cut into slices. Text
keeps its line breaks, and each piece the whitespace before it. A piece that ends inside a
fenced block names it, so the chunk ending with it can close it.

A fenced block whose fence lines would take more than half of a piece (an absurd info string,
a tiny ``max_words``) is cut like prose, without closing and reopening it.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from itertools import pairwise
from typing import NamedTuple

from retrieval.domain.chunking_sections import Fence, PageStart

FENCE_LINE = re.compile(r"^[^\S\n]*(?:`{3,}|~{3,}).*$", re.MULTILINE)
"""A line of a text that may open or close a fenced code block."""
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
WORD = re.compile(r"\S+")
PARAGRAPH_SEPARATOR = "\n\n"


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


def text_blocks(text: str) -> Iterator[tuple[int, int, Fence | None]]:
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
    for start, end, fence in text_blocks(text):
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


def pieces(
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
