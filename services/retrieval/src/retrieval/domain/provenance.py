"""Where a document came from, and how chunks are found by it.

A document read from a file records its ``Source``: the file's absolute path (or a URL),
the root it was ingested under, its type, size and modification time. The path identifies
the document's origin: two sources never share one document id unless the caller replaces
on purpose, and ``sync`` deletes the documents whose source under a root is gone.

Sources are matched by path segment, never by characters: ``/kb/docs`` is a prefix of
``/kb/docs/a.md`` but not of ``/kb/docs-old/a.md``. A vector index has no prefix operator
(Pinecone has none), so each chunk carries its source's prefixes as a list
(``SOURCE_PREFIXES_FIELD``) and a prefix filter is a membership test on it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field

from retrieval.domain.frozen import Frozen
from retrieval.domain.metadata import check_unicode

MAX_SOURCE_CHARS = 2048
URL = re.compile(r"^(?P<origin>[A-Za-z][A-Za-z0-9+.\-]*://[^/?#]*)(?P<path>[^?#]*)(?P<rest>.*)$")
SOURCE_FIELD = "source_uri"
"""Vector and keyword metadata: the chunk's source, exactly."""
SOURCE_PREFIXES_FIELD = "source_prefixes"
"""Vector and keyword metadata: every prefix of the chunk's source, by path segment."""
FILE_TYPE_FIELD = "file_type"
SECTION_FIELD = "section"
PROVENANCE_FIELDS = frozenset({SOURCE_FIELD, SOURCE_PREFIXES_FIELD, FILE_TYPE_FIELD, SECTION_FIELD})


def check_source(value: str) -> str:
    """An absolute path (``/...``, or ``C:/...``) or a URL (``scheme://...``), normalised:
    ``.`` and ``..`` segments and doubled or trailing slashes of a path are removed."""
    if not value or len(value) > MAX_SOURCE_CHARS:
        raise ValueError(f"must be 1 to {MAX_SOURCE_CHARS} characters")
    if "\x00" in value or "\n" in value:
        raise ValueError("must not contain a NUL or a line break")
    check_unicode(value)
    url = URL.match(value)
    if url:
        path = url["path"]
        normal = posixpath.normpath(path) if path.strip("/") else ""
        return f"{url['origin']}{normal}{url['rest']}"
    drive, path = (value[:2], value[2:]) if re.match(r"^[A-Za-z]:[/\\]", value) else ("", value)
    path = path.replace("\\", "/") if drive else path
    if not path.startswith("/"):
        raise ValueError(f"{value!r} is neither an absolute path nor a URL")
    return drive + posixpath.normpath(path).replace("//", "/")


SourceText = Annotated[str, AfterValidator(check_source)]


def source_prefixes(source: str) -> list[str]:
    """Every prefix of ``source`` by path segment, the shortest first, ``source`` last."""
    url = URL.match(source)
    if url:
        base, path = url["origin"], url["path"]
    else:
        drive = source[:2] if re.match(r"^[A-Za-z]:/", source) else ""
        base, path = drive, source[len(drive) :]
    segments = [segment for segment in path.split("/") if segment]
    prefixes = [base or "/"] if not url or not segments else [base]
    prefixes += [f"{base}/{'/'.join(segments[: n + 1])}" for n in range(len(segments))]
    if url and url["rest"]:
        prefixes.append(source)
    return list(dict.fromkeys(prefixes))


def is_under(source: str | None, prefix: str) -> bool:
    """Whether ``source`` is ``prefix`` or lies below it, segment by segment."""
    return source is not None and prefix in source_prefixes(source)


def page_span(pages: Sequence[int]) -> str:
    """``p. 3``, ``pp. 3-5``, or empty for no pages."""
    if not pages:
        return ""
    first, last = min(pages), max(pages)
    return f"p. {first}" if first == last else f"pp. {first}-{last}"


def location(source: str | None, section: str, pages: Sequence[int]) -> list[str]:
    """Where a chunk is, as far as known: its source, ``§ section``, its page span."""
    parts = [source] if source else []
    if section:
        parts.append(f"§ {section}")
    if pages:
        parts.append(page_span(pages))
    return parts


def as_source(value: Any) -> Any:
    """A bare string stands for ``Source(uri=value)``."""
    return {"uri": value} if isinstance(value, str) else value


class Source(Frozen):
    """Where a document was read from."""

    uri: SourceText = Field(description="Absolute path of the file, or its URL.")
    root: SourceText | None = Field(
        default=None, description="The folder (or file) it was ingested under, if one."
    )
    file_type: str | None = Field(
        default=None,
        max_length=32,
        pattern=r"^[a-z0-9]+$",
        description="markdown, text, html, pdf, docx or json; None when unknown.",
    )
    size: int | None = Field(default=None, ge=0, description="Bytes of the file when read.")
    modified_at: datetime | None = Field(
        default=None, description="The file's modification time when read."
    )


SourceField = Annotated[Source | None, BeforeValidator(as_source)]
