"""Turns HTML, PDF and Word (DOCX) files into markdown for the chunker.

Converters: ``beautifulsoup4`` + ``markdownify`` (HTML), ``mammoth`` + ``markdownify`` (DOCX),
``pypdf`` (PDF), all in the optional ``documents`` group. Chosen over ``markitdown``, which
wraps the same HTML and DOCX converters (identical markdown on our samples) but installs 206 MB
(``magika``, ``onnxruntime``) against 2.5 MB and reads PDFs about 20 times slower (pdfminer).

HTML and DOCX headings stay markdown headings, so the chunker cuts at them. An HTML code
block's fence names its language when its ``<code>`` (or ``<pre>``) class does:
``language-rust`` (mdBook, Prism), ``lang-rust``, or ``rust`` beside ``hljs`` (highlight.js).
Lines mdBook hides from the reader (``<span class="boring">``: ``fn main() {`` wrapped around
an example) are dropped.

A PDF has no markup, so its structure is recovered from what the file gives:

- pages: each page's text follows the line ``page_marker(n)`` (1-based); a page with neither
  text nor a bookmark is left out, marker and all, and later pages keep their numbers;
- title: the document information's ``/Title``, unless blank or a placeholder
  (``Microsoft Word - report.docx``, ``untitled``); without one the caller falls back to the
  file name, as no heading of a PDF is a ``#`` one;
- headings: the outline's entries (bookmarks) at level ``##`` for the top, one more ``#`` a
  level down, each in place of the lines showing its title on its page (where none does, after
  the bookmark before it on that page, or at its top); without an outline, short lines set
  clearly larger than the body text (the size of most characters), the largest size ``##``.
  A wrong heading costs more than a missing one, so bold body-sized headings stay text. A text
  line that reads as a markdown heading (``# define``) is escaped, an escape the chunker reads
  and drops (``text_line``).

Everything runs offline.
"""

from __future__ import annotations

import io
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from itertools import groupby
from typing import TYPE_CHECKING, TypeVar

from retrieval.domain.chunking_sections import page_marker, text_line
from retrieval.errors import InvalidRequestError

if TYPE_CHECKING:
    from bs4 import Tag
    from pypdf import PageObject, PdfReader

T = TypeVar("T")

EXTRA_HINT = "install the 'documents' extra: pip install 'retrieval-service[documents]'"
DROPPED_HTML = ["script", "style", "noscript", "template", "nav"]
HIDDEN_CODE_LINES = "pre span.boring"
"""Where mdBook puts the lines of an example it hides from the reader."""
LANGUAGE_CLASS = re.compile(r"^(?:language|lang)-([^\s`]+)$")
HIGHLIGHTED = "hljs"
"""The class highlight.js gives a block, the language's name beside it in its older form."""
BLANK_LINES = re.compile(r"\n\s*\n(\s*\n)+")
TOP_HEADING_LEVEL = 2
"""The level of a PDF's top headings: a ``#`` heading would be taken for the document title."""
HEADING_SIZE_RATIO = 1.15
"""A line is a heading only if set at least this much larger than the body text."""
MAX_HEADING_WORDS = 12
MAX_UNLIKE_SHARE = 0.25
"""A larger size sets headings only if at most this share of its lines do not look like one."""
MAX_HEADING_LINES = 3
"""The most lines a bookmark's title is looked for over, when wrapped."""
SECTION_NUMBER = re.compile(
    r"^(?:(?:[Cc]hapter|[Aa]ppendix|[Pp]art|[Ss]ection)\s+)?(?:\d+(?:\.\d+)*|[A-Z](?:\.\d+)*|[IVXLC]+)\.?\s+"
)
DOT_LEADER = re.compile(r"(?:\. ?){4}")
NOT_A_WORD = re.compile(r"[\W_]+")
PLACEHOLDER_TITLE = re.compile(
    r"^(?:microsoft (?:word|powerpoint|excel)\b.*"
    r"|.*\.(?:docx?|pdf|tex|dvi|ps|rtf|odt|pptx?|xlsx?|indd|txt|html?|md)"
    r"|untitled(?: document)?(?:[ -]?\d+)?|(?:document|book|presentation)\d*"
    r"|title|no title|none|unknown|powerpoint presentation)$",
    re.IGNORECASE,
)
Run = tuple[str, float]
"""Text extracted from a PDF, and its effective font size in points."""


@dataclass(frozen=True)
class Converted:
    markdown: str
    title: str | None = None


@dataclass(frozen=True)
class Line:
    text: str
    size: float
    """The smallest effective font size of its visible characters (0 if it has none)."""


@dataclass(frozen=True)
class Bookmark:
    """An outline entry: its markdown heading level and its title."""

    level: int
    title: str


def tidy(markdown: str) -> str:
    return BLANK_LINES.sub("\n\n", markdown).strip()


def html_to_markdown(data: bytes) -> Converted:
    """The page's ``<main>`` (or body) as markdown, and its ``<title>``."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(data, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in [*soup(DROPPED_HTML), *soup.select(HIDDEN_CODE_LINES)]:
        tag.decompose()
    if soup.head:
        soup.head.decompose()
    body = soup.find("main") or soup.body or soup
    converter = MarkdownConverter(
        heading_style="ATX", bullets="*", code_language_callback=code_language
    )
    return Converted(tidy(converter.convert_soup(body)), title or None)


def code_language(pre: Tag) -> str | None:
    """The language a code block's classes name: its ``<code>``'s, else its own."""
    named = (language_named(element.get("class", [])) for element in (pre.code, pre) if element)
    return next(filter(None, named), None)


def language_named(classes: list[str]) -> str | None:
    """``X`` of a class ``language-X`` or ``lang-X``, else the class beside ``hljs``."""
    for name in classes:
        if found := LANGUAGE_CLASS.match(name):
            return found[1]
    beside = [name for name in classes if name != HIGHLIGHTED and "`" not in name]
    return beside[0] if HIGHLIGHTED in classes and beside else None


def docx_to_markdown(data: bytes) -> Converted:
    """Word paragraph styles ``Heading 1``..``6`` become markdown headings."""
    import mammoth
    from markdownify import markdownify

    html = mammoth.convert_to_html(io.BytesIO(data)).value
    return Converted(tidy(markdownify(html, heading_style="ATX", bullets="*")))


def pdf_to_markdown(data: bytes) -> Converted:
    """Each page's text after its page marker, with headings from the outline or, without
    one, from font sizes; the title from the document information."""
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    if reader.is_encrypted and not reader.decrypt(""):
        raise InvalidRequestError("the PDF is encrypted", field="content")
    pages = [text_runs(page) for page in reader.pages]
    if not any(text.strip() for runs in pages for text, _ in runs):
        raise InvalidRequestError(
            "the PDF has no extractable text (a scanned PDF needs OCR first)", field="content"
        )
    lines = [lines_of(runs) for runs in pages]
    bookmarks = unless_damaged(lambda: bookmarks_by_page(reader), {})
    if bookmarks:
        shown = [with_bookmarks(page, bookmarks.get(n, [])) for n, page in enumerate(lines)]
    else:
        levels = heading_levels(lines, body_size(pages))
        shown = [with_size_headings(page, levels) for page in lines]
    markdown = "\n\n".join(
        f"{page_marker(number)}\n\n" + "\n".join(page)
        for number, page in enumerate(shown, start=1)
        if "".join(page).strip()
    )
    return Converted(tidy(markdown), unless_damaged(lambda: meaningful_title(reader), None))


def unless_damaged(read: Callable[[], T], default: T) -> T:
    """``read()``, or ``default`` if the part of the PDF it reads is damaged: a broken outline
    or document information costs itself, not the text."""
    # pypdf raises many kinds of error on a damaged object (see ``convert``).
    try:
        return read()
    except Exception:
        return default


def text_runs(page: PageObject) -> list[Run]:
    """The page's text as pypdf extracts it, in runs of one effective font size."""
    runs: list[Run] = []

    def visit(text: str, cm: list[float], tm: list[float], font: object, size: float) -> None:
        runs.append((text, size * vertical_scale(tm, cm)))

    page.extract_text(visitor_text=visit)
    return runs


def vertical_scale(tm: list[float], cm: list[float]) -> float:
    """How much the text matrix and the page's transformation stretch a glyph's height."""
    return math.hypot(tm[2] * cm[0] + tm[3] * cm[2], tm[2] * cm[1] + tm[3] * cm[3])


def lines_of(runs: list[Run]) -> list[Line]:
    lines: list[Line] = []
    parts: list[str] = []
    sizes: list[float] = []
    for text, size in runs:
        for position, part in enumerate(text.split("\n")):
            if position:
                lines.append(Line("".join(parts), min(sizes, default=0.0)))
                parts, sizes = [], []
            parts.append(part)
            if part.strip():
                sizes.append(size)
    lines.append(Line("".join(parts), min(sizes, default=0.0)))
    return lines


def rounded(size: float) -> float:
    """A font size to the half point, so sizes that differ by rounding count as one."""
    return round(size * 2) / 2


def body_size(pages: list[list[Run]]) -> float:
    """The font size of most of the characters."""
    characters: Counter[float] = Counter()
    for runs in pages:
        for text, size in runs:
            characters[rounded(size)] += len("".join(text.split()))
    return characters.most_common(1)[0][0]


def heading_levels(pages: list[list[Line]], body: float) -> dict[float, int]:
    """The heading level of each font size that sets headings, the largest at the top level.

    Such a size is clearly larger than the body's and sets mostly short lines of words: one
    with many long lines sets running text (an abstract), one with many lines of no letters
    a chart's labels, and their short lines are no headings. Entries of a table of contents
    count for neither. Text of no size (a damaged font) sets none."""
    if body <= 0:
        return {}
    lines: Counter[float] = Counter()
    unlike_headings: Counter[float] = Counter()
    for page in pages:
        for line in page:
            size = rounded(line.size)
            if size >= body * HEADING_SIZE_RATIO and line.text.strip() and not in_contents(line):
                lines[size] += 1
                unlike_headings[size] += not looks_like_heading(line.text)
    sizes = [size for size in lines if unlike_headings[size] <= lines[size] * MAX_UNLIKE_SHARE]
    return {
        size: min(TOP_HEADING_LEVEL + rank, 6)
        for rank, size in enumerate(sorted(sizes, reverse=True))
    }


def in_contents(line: Line) -> bool:
    """An entry of a table of contents, dots leading to its page number."""
    return DOT_LEADER.search(line.text) is not None


def looks_like_heading(text: str) -> bool:
    """At most ``MAX_HEADING_WORDS`` words, with letters."""
    return len(text.split()) <= MAX_HEADING_WORDS and any(c.isalpha() for c in text)


def with_size_headings(lines: list[Line], levels: dict[float, int]) -> list[str]:
    """Markdown lines of a page, its lines set in a heading size made headings; consecutive
    lines of one heading size are one heading wrapped."""

    def level(line: Line) -> int | None:
        if in_contents(line) or not looks_like_heading(line.text):
            return None
        return levels.get(rounded(line.size))

    shown: list[str] = []
    for heading_level, group in groupby(lines, key=level):
        texts = [line.text for line in group]
        if heading_level is None:
            shown.extend(text_line(text) for text in texts)
        else:
            shown.append(heading(heading_level, " ".join(texts)))
    return shown


def bookmarks_by_page(reader: PdfReader) -> dict[int, list[Bookmark]]:
    """The outline's entries by page index, in outline order, top level ``TOP_HEADING_LEVEL``."""
    found: dict[int, list[Bookmark]] = {}

    def walk(entries: list, level: int) -> None:
        for entry in entries:
            if isinstance(entry, list):
                walk(entry, level + 1)
                continue
            page = reader.get_destination_page_number(entry)
            title = " ".join(str(entry.title or "").split())
            if page is not None and page >= 0 and title:
                found.setdefault(page, []).append(Bookmark(min(level, 6), title))

    walk(reader.outline, TOP_HEADING_LEVEL)
    return found


def with_bookmarks(lines: list[Line], bookmarks: list[Bookmark]) -> list[str]:
    """Markdown lines of a page, each bookmark a heading in place of the lines showing its
    title, or after the heading before it (at the top) where no line after that does."""
    shown: list[str] = []
    start = 0
    for bookmark in bookmarks:
        found = lines_showing(bookmark.title, lines, start)
        if found is None:
            shown.append(heading(bookmark.level, bookmark.title))
            continue
        first, end = found
        shown.extend(text_line(line.text) for line in lines[start:first])
        printed = " ".join(" ".join(line.text for line in lines[first:end]).split())
        shown.append(heading(bookmark.level, printed))
        start = end
    shown.extend(text_line(line.text) for line in lines[start:])
    return shown


def lines_showing(title: str, lines: list[Line], start: int) -> tuple[int, int] | None:
    """The first run of at most ``MAX_HEADING_LINES`` lines from ``start`` that shows
    ``title``, maybe after a section number, as (first, end) indices."""
    wanted = matching_key(title)
    if not wanted:
        return None
    for first in range(start, len(lines)):
        for end in range(first + 1, min(first + MAX_HEADING_LINES, len(lines)) + 1):
            seen = matching_key(" ".join(line.text for line in lines[first:end]))
            if not seen or not wanted.startswith(seen):
                break
            if seen == wanted:
                return first, end
    return None


def matching_key(text: str) -> str:
    """``text`` without a leading section number, spaces, punctuation or case."""
    return NOT_A_WORD.sub("", SECTION_NUMBER.sub("", text.strip())).casefold()


def heading(level: int, text: str) -> str:
    return f"\n{'#' * level} {text.strip()}\n"


def meaningful_title(reader: PdfReader) -> str | None:
    """The ``/Title`` of the document information, unless it is blank or a placeholder."""
    title = reader.metadata.title if reader.metadata else None
    if not isinstance(title, str):
        return None
    title = " ".join(title.split())
    return title if any(c.isalpha() for c in title) and not PLACEHOLDER_TITLE.match(title) else None


CONVERTERS: dict[str, tuple[str, Callable[[bytes], Converted]]] = {
    ".html": ("HTML", html_to_markdown),
    ".htm": ("HTML", html_to_markdown),
    ".docx": ("Word (DOCX)", docx_to_markdown),
    ".pdf": ("PDF", pdf_to_markdown),
}


def convert(suffix: str, data: bytes) -> Converted:
    """Markdown of a file of a type in ``CONVERTERS``, or InvalidRequestError saying why not."""
    kind, converter = CONVERTERS[suffix]
    try:
        return converter(data)
    except InvalidRequestError:
        raise
    except ModuleNotFoundError as error:
        raise InvalidRequestError(f"reading {kind} needs {error.name}: {EXTRA_HINT}") from error
    # Parsers raise many kinds of error on malformed input; any of them means this one file
    # cannot be read, which the caller reports without stopping.
    except Exception as error:
        raise InvalidRequestError(
            f"not a readable {kind} file ({type(error).__name__}: {error})", field="content"
        ) from error
