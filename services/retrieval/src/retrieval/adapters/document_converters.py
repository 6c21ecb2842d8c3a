"""Turns HTML, PDF and Word (DOCX) files into markdown for the chunker.

Converters: ``beautifulsoup4`` + ``markdownify`` (HTML), ``mammoth`` + ``markdownify`` (DOCX),
``pypdf`` (PDF), all in the optional ``documents`` group. Chosen over ``markitdown``, which
wraps the same HTML and DOCX converters (identical markdown on our samples) but installs 206 MB
(``magika``, ``onnxruntime``) against 2.5 MB and reads PDFs about 20 times slower (pdfminer).

HTML and DOCX headings stay markdown headings, so the chunker cuts at them; a PDF has no
headings to keep, only text, page by page. Everything runs offline.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from dataclasses import dataclass

from retrieval.errors import InvalidRequestError

EXTRA_HINT = "install the 'documents' extra: pip install 'retrieval-service[documents]'"
DROPPED_HTML = ["script", "style", "noscript", "template", "nav"]
BLANK_LINES = re.compile(r"\n\s*\n(\s*\n)+")


@dataclass(frozen=True)
class Converted:
    markdown: str
    title: str | None = None


def tidy(markdown: str) -> str:
    return BLANK_LINES.sub("\n\n", markdown).strip()


def html_to_markdown(data: bytes) -> Converted:
    """The page's ``<main>`` (or body) as markdown, and its ``<title>``."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(data, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup(DROPPED_HTML):
        tag.decompose()
    if soup.head:
        soup.head.decompose()
    body = soup.find("main") or soup.body or soup
    markdown = MarkdownConverter(heading_style="ATX", bullets="*").convert_soup(body)
    return Converted(tidy(markdown), title or None)


def docx_to_markdown(data: bytes) -> Converted:
    """Word paragraph styles ``Heading 1``..``6`` become markdown headings."""
    import mammoth
    from markdownify import markdownify

    html = mammoth.convert_to_html(io.BytesIO(data)).value
    return Converted(tidy(markdownify(html, heading_style="ATX", bullets="*")))


def pdf_to_markdown(data: bytes) -> Converted:
    """The text of every page, pages separated by a blank line."""
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    if reader.is_encrypted and not reader.decrypt(""):
        raise InvalidRequestError("the PDF is encrypted", field="content")
    pages = (page.extract_text() or "" for page in reader.pages)
    text = tidy("\n\n".join(page.strip() for page in pages))
    if not text:
        raise InvalidRequestError(
            "the PDF has no extractable text (a scanned PDF needs OCR first)", field="content"
        )
    return Converted(text)


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
