"""Bytes the files under a directory occupy, for the footprints of the embedded stores."""

from __future__ import annotations

import os
from pathlib import Path


def directory_bytes(directory: Path) -> int:
    """The sizes of every file below ``directory`` added up; 0 when it does not exist.

    A file removed while the walk runs (a store replacing a snapshot) is skipped.
    """
    total = 0
    for root, _, names in os.walk(directory):
        for name in names:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except FileNotFoundError:
                continue
    return total
