"""Sources as a person reads them, on the command line and in the console."""

from __future__ import annotations

import os

from retrieval.domain.provenance import URL


def readable_source(source: str | None) -> str:
    """A source relative to the working directory when inside it; a URL as it is."""
    if source is None:
        return ""
    if URL.match(source):
        return source
    relative = os.path.relpath(source)
    return source if relative.startswith("..") else relative
