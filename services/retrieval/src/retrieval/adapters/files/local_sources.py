"""Local paths as sources are stored: absolute, whatever the working directory."""

from __future__ import annotations

import os


def as_source(path: str) -> str:
    """A path as sources are stored (absolute); a URL as it is."""
    from retrieval.domain.provenance import URL

    return path if URL.match(path) else os.path.abspath(path)


def source_or_none(path: str | None) -> str | None:
    """``as_source(path)``, None when no path is given."""
    return as_source(path) if path is not None else None
