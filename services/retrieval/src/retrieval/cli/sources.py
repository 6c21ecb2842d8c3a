"""Sources as the command line takes and shows them."""

from __future__ import annotations

import os

from retrieval.domain.provenance import URL


def as_source(path: str) -> str:
    """A path as sources are stored (absolute); a URL as it is."""
    return path if URL.match(path) else os.path.abspath(path)


def shown(source: str | None) -> str:
    """A source as a person reads it: relative to the working directory when inside it."""
    if source is None:
        return ""
    if URL.match(source):
        return source
    relative = os.path.relpath(source)
    return source if relative.startswith("..") else relative
