"""Backup files: a namespace's documents written out and read back, one at a time."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

from retrieval.domain.backup import BackedUpDocument, BackupContents, BackupHeader


class BackupWriter(Protocol):
    """A backup file being written."""

    def add(self, document: BackedUpDocument) -> None:
        """Append one document."""
        ...


class BackupArchive(Protocol):
    """Reads and writes backup files. Both ends refuse what they cannot trust: a file is
    either whole and checked, or ``BackupFileError`` names what is wrong with it."""

    def create(self, path: Path, header: BackupHeader) -> AbstractContextManager[BackupWriter]:
        """A writer of a new backup at ``path``; the file appears there, whole, only when the
        block ends without an error (a file already there is replaced then)."""
        ...

    def verify(self, path: Path) -> BackupContents:
        """Read the whole file and check it: its format and version, every entry, its counts
        and its checksum. Raises ``BackupFileError``."""
        ...

    def documents(self, path: Path) -> Iterator[BackedUpDocument]:
        """The documents of a file ``verify`` accepted, in the order written. Raises
        ``BackupFileError`` if the file has changed since."""
        ...

    def entries(self, path: Path) -> Iterator[BackupHeader | BackedUpDocument]:
        """The header, then each document in the order written, each checked as it is read:
        ``BackupFileError`` at the first entry that is wrong, and after the last document when
        the counts or the checksum do not match. A reader that reads to the end before acting
        has checked the whole file in that one read."""
        ...
