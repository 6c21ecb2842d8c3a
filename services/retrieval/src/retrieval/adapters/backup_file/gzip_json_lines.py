"""The backup file: gzip'd JSON lines, one entry a line, each line one JSON object::

    {"header": {"format": "retrieval-backup", "version": 1, "namespace": ..., "model": ...,
                "dimension": ..., "created_at": ...}}
    {"document": {"record": {...}, "chunks": [{...}, ...], "vectors": "<base64>"}}
    ...
    {"end": {"documents": 2, "chunks": 9, "sha256": "<hex>"}}

``sha256`` covers every byte (uncompressed) before the ``end`` line, so a file cut short, a
flipped byte or an edited entry is refused, not half-restored. A document is one line, so a
file streams in and out a document at a time whatever the namespace's size. The file is
written beside its path (``<name>.partial``) and renamed into place once whole.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TypeVar

from pydantic import Field, ValidationError

from retrieval.domain.backup import (
    BACKUP_FORMAT,
    FORMAT_VERSION,
    BackedUpDocument,
    BackupContents,
    BackupHeader,
)
from retrieval.domain.frozen import Frozen
from retrieval.errors import BackupFileError

COMPRESS_LEVEL = 1
"""Vectors hardly compress; the fastest level keeps a backup's pace near the stores'."""
END = b'{"end"'
Line = TypeVar("Line", bound=Frozen)


class HeaderLine(Frozen):
    header: BackupHeader


class DocumentLine(Frozen):
    document: BackedUpDocument


class Trailer(Frozen):
    documents: int = Field(ge=0, description="Document lines before it.")
    chunks: int = Field(ge=0, description="Chunks of those documents.")
    sha256: str = Field(description="Of every byte before the trailer's line.")


class EndLine(Frozen):
    end: Trailer


class GzipJsonLinesWriter:
    """Appends lines to an open gzip file, counting them and hashing their bytes."""

    def __init__(self, file: IO[bytes]) -> None:
        self._file = file
        self._digest = hashlib.sha256()
        self._documents = 0
        self._chunks = 0

    def line(self, text: str) -> None:
        data = text.encode() + b"\n"
        self._digest.update(data)
        self._file.write(data)

    def add(self, document: BackedUpDocument) -> None:
        self.line(DocumentLine(document=document).model_dump_json())
        self._documents += 1
        self._chunks += len(document.chunks)

    def end(self) -> None:
        trailer = Trailer(
            documents=self._documents, chunks=self._chunks, sha256=self._digest.hexdigest()
        )
        self._file.write(EndLine(end=trailer).model_dump_json().encode() + b"\n")


class GzipJsonLinesBackupArchive:
    """Backup files as gzip'd JSON lines (the module's docstring draws one)."""

    @contextmanager
    def create(self, path: Path, header: BackupHeader) -> Iterator[GzipJsonLinesWriter]:
        partial = path.with_name(f"{path.name}.partial")
        try:
            with gzip.open(partial, "wb", compresslevel=COMPRESS_LEVEL) as file:
                writer = GzipJsonLinesWriter(file)
                writer.line(HeaderLine(header=header).model_dump_json())
                yield writer
                writer.end()
            with partial.open("rb") as written:
                os.fsync(written.fileno())
            partial.replace(path)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise

    def verify(self, path: Path) -> BackupContents:
        header: BackupHeader | None = None
        documents = chunks = 0
        for entry in entries(path):
            if isinstance(entry, BackupHeader):
                header = entry
            else:
                documents += 1
                chunks += len(entry.chunks)
        assert header is not None
        return BackupContents(header=header, documents=documents, chunks=chunks)

    def documents(self, path: Path) -> Iterator[BackedUpDocument]:
        for entry in entries(path):
            if isinstance(entry, BackedUpDocument):
                yield entry

    def entries(self, path: Path) -> Iterator[BackupHeader | BackedUpDocument]:
        return entries(path)


def entries(path: Path) -> Iterator[BackupHeader | BackedUpDocument]:
    """The header, then each document, as read; ``BackupFileError`` as soon as something
    is wrong, the checksum and counts checked at the end."""
    digest = hashlib.sha256()
    chunks = 0
    lines = read_lines(path)
    first = next(lines, None)
    if first is None:
        raise BackupFileError(path, "is empty")
    yield checked_header(path, first)
    digest.update(first)
    for number, line in enumerate(lines, start=2):
        if line.startswith(END):
            trailer = parsed(path, EndLine, line, number).end
            if next(lines, None) is not None:
                raise BackupFileError(path, f"holds entries after its end (line {number})")
            if trailer.sha256 != digest.hexdigest():
                raise BackupFileError(path, "is corrupt: its checksum does not match")
            if (trailer.documents, trailer.chunks) != (number - 2, chunks):
                raise BackupFileError(path, "is corrupt: its counts do not match")
            return
        document = parsed(path, DocumentLine, line, number).document
        digest.update(line)
        chunks += len(document.chunks)
        yield document
    raise BackupFileError(path, "is truncated: its end is missing")


def checked_header(path: Path, line: bytes) -> BackupHeader:
    try:
        fields = json.loads(line).get("header", {})
    except (ValueError, AttributeError):
        fields = {}
    if not isinstance(fields, dict) or fields.get("format") != BACKUP_FORMAT:
        raise BackupFileError(path, f"is not a {BACKUP_FORMAT} file")
    version = fields.get("version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise BackupFileError(
            path, f"has format version {version}; this service reads up to {FORMAT_VERSION}"
        )
    return parsed(path, HeaderLine, line, 1).header


def parsed(path: Path, kind: type[Line], line: bytes, number: int) -> Line:
    try:
        return kind.model_validate_json(line)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise BackupFileError(
            path, f"is corrupt: line {number} is malformed ({where}: {first['msg']})"
        ) from error


def read_lines(path: Path) -> Iterator[bytes]:
    """The uncompressed lines, newlines kept; gzip's and the file system's errors as
    ``BackupFileError``."""
    try:
        with gzip.open(path, "rb") as file:
            yield from file
    except FileNotFoundError as error:
        raise BackupFileError(path, "does not exist") from error
    except gzip.BadGzipFile as error:
        raise BackupFileError(path, "is not a gzip file") from error
    except EOFError as error:
        raise BackupFileError(path, "is truncated") from error
    except (zlib.error, OSError) as error:
        raise BackupFileError(path, f"cannot be read ({error})") from error
