"""Reads documents from files and folders: markdown, plain text, HTML, PDF, Word, JSON.

Markdown (``.md``, ``.markdown``) and plain text (``.txt``) are read as UTF-8 markdown and may
start with a front-matter block; every key besides the three below becomes string metadata::

    ---
    document_id: blister-blight
    title: Blister Blight
    domain: plant_diseases
    region: assam
    ---

HTML (``.html``, ``.htm``), PDF and Word (``.docx``) are converted to markdown
(``document_converters``). JSON files hold collections:
``{"documents": [{"document_id", "title", "domain", "content", "metadata"}]}``.

What a file does not set itself is derived:

- document id: the file's path relative to the folder given (the file name for a file given
  directly), as ``retrieval.domain.document_ids.slug_from_path`` spells it: folders joined by
  ``--``, ``guides/frost-risk.md`` becomes ``guides--frost-risk``, and a path it cannot spell
  exactly (``guides/Frost risk (2024).md``, ``résumé.md``) ends in a hash of it
  (``guides--Frost-risk-2024-<hash>``). Which id a namespace keeps for a file it already holds
  is the service's (``retrieval.service.ingestion.file_identity``);
- title: the front matter's (or an HTML ``<title>``), else the one given for all (``--title``,
  allowed with one file only), else the first ``# `` heading, else the file name;
- domain: the front matter's, else the one given for all (``--domain``).

``read_documents`` never stops at a bad file: missing paths, unsupported or unreadable files,
text that is not UTF-8, empty files, files over the size limit (left unread) and invalid
documents each become a ``FileFailure``, and a document id read twice fails the second time.
Inside folders, hidden entries are ignored and files of unsupported types are skipped and
listed. ``load_documents`` is the strict form.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePath

from pydantic import Field, ValidationError

from retrieval.adapters.files.converters import convert
from retrieval.domain.document_ids import slug_from_path
from retrieval.domain.models import Frozen, RagDocument, invalid_request
from retrieval.domain.provenance import Source
from retrieval.errors import InvalidRequestError

FENCE = "---"
DOCUMENT_FIELDS = ("document_id", "title", "domain")
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".txt"})
FILE_TYPES = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".json": "json",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
    ".docx": "docx",
}
SUPPORTED_SUFFIXES = frozenset(FILE_TYPES)
MAX_FILE_BYTES = 10_000_000
"""Largest file read unless the caller sets another limit (``RETRIEVAL_INGEST_MAX_FILE_BYTES``)."""
H1 = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)

FileProgress = Callable[[int, int], None]


class FileFailure(Frozen):
    """A file, or one document of a JSON collection, that could not be read."""

    source: str = Field(description="The file, with [n] for an entry of a collection.")
    reason: str = Field(description="What is wrong with it.")
    field: str | None = Field(default=None, description="The document field at fault, if one.")

    @classmethod
    def of(cls, error: InvalidRequestError, source: str) -> FileFailure:
        return cls(source=source, reason=error.reason, field=error.field)

    def __str__(self) -> str:
        return f"{self.source}: {self.reason}"


class LoadedDocuments(Frozen):
    """What a set of files and folders held."""

    documents: tuple[RagDocument, ...] = Field(description="Documents read, in path order.")
    failures: tuple[FileFailure, ...] = Field(description="Files or entries that failed.")
    skipped: tuple[str, ...] = Field(description="Files in folders of an unsupported type.")
    files: int = Field(ge=0, description="Files found to read, the failed ones included.")


FileContents = tuple[list[RagDocument], list[FileFailure]]
"""The documents a file holds, and a failure for each entry of it that is invalid."""


@dataclass(frozen=True)
class SourceFile:
    path: Path
    document_id: str
    root: Path
    """The folder it was found in, or the file itself when given directly."""

    def source(self) -> Source:
        """The file's provenance, read now."""
        stat = self.path.stat()
        return Source(
            uri=os.path.abspath(self.path),
            root=os.path.abspath(self.root),
            file_type=FILE_TYPES[self.path.suffix.lower()],
            size=stat.st_size,
            modified_at=datetime.fromtimestamp(stat.st_mtime, UTC),
        )


@dataclass(frozen=True)
class Defaults:
    domain: str | None
    title: str | None


def visible(path: Path, root: Path) -> bool:
    return not any(part.startswith(".") for part in path.relative_to(root).parts)


def find_files(paths: Iterable[Path]) -> tuple[list[SourceFile], list[FileFailure], list[str]]:
    """The files to read, the paths that failed already, and the files skipped in folders."""
    files: list[SourceFile] = []
    failures: list[FileFailure] = []
    skipped: list[str] = []
    for path in paths:
        if path.is_dir():
            for found in sorted(p for p in path.rglob("*") if p.is_file() and visible(p, path)):
                if found.suffix.lower() in SUPPORTED_SUFFIXES:
                    slug = slug_from_path(found.relative_to(path))
                    files.append(SourceFile(found, slug, path))
                else:
                    skipped.append(str(found))
        elif not path.exists():
            failures.append(FileFailure(source=str(path), reason="no such file or directory"))
        elif path.suffix.lower() not in SUPPORTED_SUFFIXES:
            failures.append(
                FileFailure(
                    source=str(path),
                    reason=f"unsupported file type {path.suffix or '(none)'!r}; supported: "
                    + ", ".join(sorted(SUPPORTED_SUFFIXES)),
                )
            )
        else:
            files.append(SourceFile(path, slug_from_path(PurePath(path.name)), path))
    return files, failures, skipped


def build_document(raw: object) -> RagDocument:
    try:
        return RagDocument.model_validate(raw)
    except ValidationError as error:
        raise invalid_request(error) from error


def split_front_matter(text: str) -> tuple[dict[str, str], str]:
    """The front-matter keys (none when the text has no block) and the body after it."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != FENCE:
        return {}, text
    try:
        end = next(n for n, line in enumerate(lines[1:], start=1) if line.strip() == FENCE)
    except StopIteration:
        raise InvalidRequestError("front matter never closed", field="front_matter") from None
    header: dict[str, str] = {}
    for line in lines[1:end]:
        key, separator, value = line.partition(":")
        if not separator:
            raise InvalidRequestError(f"bad front-matter line {line!r}", field="front_matter")
        header[key.strip()] = value.strip()
    return header, "\n".join(lines[end + 1 :])


def first_heading(markdown: str) -> str | None:
    found = H1.search(markdown)
    return found.group(1) if found else None


def markdown_document(
    text: str, source: SourceFile, defaults: Defaults, own_title: str | None = None
) -> RagDocument:
    """A document from markdown text; see the module docstring for what fills each field."""
    header, body = split_front_matter(text)
    fields = {key: header.pop(key, None) or None for key in DOCUMENT_FIELDS}
    domain = fields["domain"] or defaults.domain
    if domain is None:
        raise InvalidRequestError(
            "no domain: set 'domain:' in front matter or pass --domain", field="domain"
        )
    title = fields["title"] or own_title or defaults.title or first_heading(body)
    return build_document(
        {
            "document_id": fields["document_id"] or source.document_id,
            "title": title or source.path.stem,
            "domain": domain,
            "content": body.strip(),
            "metadata": header,
            "source": source.source(),
        }
    )


def parse_collection(text: str, source: SourceFile, defaults: Defaults) -> FileContents:
    """The valid documents of a JSON collection, and a failure for each invalid one; the
    file is every entry's source."""
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidRequestError(f"not JSON ({error})", field="documents") from error
    if not isinstance(payload, dict) or not isinstance(payload.get("documents"), list):
        raise InvalidRequestError("expected {'documents': [...]}", field="documents")
    # A given title names one document; a collection's documents carry their own.
    given = {} if defaults.domain is None else {"domain": defaults.domain}
    provenance = source.source()
    documents: list[RagDocument] = []
    failures: list[FileFailure] = []
    for n, raw in enumerate(payload["documents"]):
        try:
            documents.append(build_document(collection_entry(raw, given, provenance)))
        except InvalidRequestError as error:
            failures.append(FileFailure.of(error, f"{source.path}[{n}]"))
    return documents, failures


def collection_entry(raw: object, given: dict[str, str], source: Source) -> object:
    """An entry of a collection with the defaults and the file as its source."""
    if not isinstance(raw, dict):
        return raw
    if "source" in raw:
        raise InvalidRequestError(
            "an entry of a collection takes the file as its source; put a URL in metadata",
            field="source",
        )
    return {**given, **raw, "source": source}


def read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InvalidRequestError(
            f"not UTF-8 text (byte {error.start}); save it as UTF-8", field="content"
        ) from error


def check_size(path: Path, max_bytes: int) -> None:
    size = path.stat().st_size
    if size == 0:
        raise InvalidRequestError("empty file", field="content")
    if size > max_bytes:
        raise InvalidRequestError(
            f"{size:,} bytes, over the limit of {max_bytes:,} "
            "(RETRIEVAL_INGEST_MAX_FILE_BYTES); split the file or raise the limit",
            field="content",
        )


def read_file(source: SourceFile, defaults: Defaults, max_bytes: int) -> FileContents:
    """The documents of one file; raises InvalidRequestError when the whole file is unusable
    (empty, over ``max_bytes``: checked before it is read)."""
    path, suffix = source.path, source.path.suffix.lower()
    check_size(path, max_bytes)
    if suffix == ".json":
        return parse_collection(read_text(path), source, defaults)
    if suffix in MARKDOWN_SUFFIXES:
        return [markdown_document(read_text(path), source, defaults)], []
    converted = convert(suffix, path.read_bytes())
    return [markdown_document(converted.markdown, source, defaults, converted.title)], []


def read_documents(
    paths: Iterable[Path],
    *,
    domain: str | None = None,
    title: str | None = None,
    on_file: FileProgress | None = None,
    max_file_bytes: int = MAX_FILE_BYTES,
) -> LoadedDocuments:
    """Every document in these files and folders, in path order, and what failed.

    ``domain`` and ``title`` fill documents that do not set their own; ``title`` needs exactly
    one file. ``on_file(done, total)`` is called after each file. A file over
    ``max_file_bytes`` fails unread.
    """
    files, failures, skipped = find_files(paths)
    if title is not None and len(files) > 1:
        raise InvalidRequestError(
            f"one title for every document needs exactly one file; {len(files)} were found",
            field="title",
        )
    defaults = Defaults(domain=domain, title=title)
    documents: list[RagDocument] = []
    read_from: dict[str, str] = {}
    for done, source in enumerate(files, start=1):
        try:
            found, bad = read_file(source, defaults, max_file_bytes)
        except InvalidRequestError as error:
            found, bad = [], [FileFailure.of(error, str(source.path))]
        except OSError as error:
            found, bad = [], [FileFailure(source=str(source.path), reason=str(error.strerror))]
        failures.extend(bad)
        for document in found:
            if document.document_id in read_from:
                failures.append(
                    FileFailure(
                        source=str(source.path),
                        reason=f"document id {document.document_id!r} was already read from "
                        f"{read_from[document.document_id]}",
                        field="document_id",
                    )
                )
                continue
            read_from[document.document_id] = str(source.path)
            documents.append(document)
        if on_file is not None:
            on_file(done, len(files))
    return LoadedDocuments(
        documents=tuple(documents),
        failures=tuple(failures),
        skipped=tuple(skipped),
        files=len(files),
    )


def load_documents(paths: Iterable[Path]) -> list[RagDocument]:
    """Every document in these files and folders; InvalidRequestError at the first failure."""
    loaded = read_documents(paths)
    if loaded.failures:
        first = loaded.failures[0]
        raise InvalidRequestError(str(first), field=first.field)
    return list(loaded.documents)
