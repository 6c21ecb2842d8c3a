"""What a sync of files and folders covers: the roots the namespace mirrors, and the sources
whose documents it keeps because they could not be read this time."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from retrieval.adapters.files.document_files import FileFailure

ENTRY_OF_COLLECTION = re.compile(r"\[\d+\]$")
"""What a failure's source ends with when it is one entry of a JSON collection."""


@dataclass(frozen=True)
class SyncScope:
    roots: tuple[str, ...]
    """Absolute paths of the paths given that exist."""
    unreadable: frozenset[str]
    """Absolute paths of the files of which something failed to read."""


def sync_scope(paths: Iterable[Path], failures: Iterable[FileFailure]) -> SyncScope:
    return SyncScope(
        roots=tuple(os.path.abspath(path) for path in paths if path.exists()),
        unreadable=frozenset(
            os.path.abspath(ENTRY_OF_COLLECTION.sub("", failure.source)) for failure in failures
        ),
    )
