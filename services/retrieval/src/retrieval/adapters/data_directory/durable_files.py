"""Files that survive a crash whole: written beside their target, synced, then renamed over it.

A rename is atomic, so after a crash a reader finds the old or the new file, never a mixture;
syncing the directory after it makes the rename itself durable. Temporary files end in
``.tmp``; the embedded stores delete leftovers when they load.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

TEMPORARY_SUFFIX = ".tmp"


def fsync_directory(directory: Path) -> None:
    """Make the entries of ``directory`` (files created, renamed or removed) durable."""
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def write_temporary(directory: Path, write: Callable[[BinaryIO], None]) -> Path:
    """A new temporary file in ``directory`` holding what ``write`` wrote, synced to disk."""
    with tempfile.NamedTemporaryFile(dir=directory, suffix=TEMPORARY_SUFFIX, delete=False) as file:
        try:
            write(file)
            file.flush()
            os.fsync(file.fileno())
        except BaseException:
            Path(file.name).unlink(missing_ok=True)
            raise
    return Path(file.name)


def replace_durably(source: Path, target: Path) -> None:
    """Rename ``source`` over ``target`` and sync their directory."""
    os.replace(source, target)
    fsync_directory(target.parent)


def write_atomically(target: Path, payload: bytes) -> None:
    replace_durably(write_temporary(target.parent, lambda file: file.write(payload)), target)
