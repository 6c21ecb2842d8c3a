"""Sources as the command line takes and shows them."""

from __future__ import annotations

import os
from collections.abc import Sequence

from retrieval.adapters.files.local_sources import as_source as as_source
from retrieval.domain.provenance import URL, location


def located(source: str | None, fallback: str, section: str, pages: Sequence[int]) -> str:
    """Where a match or citation is, for a person: source (else ``fallback``), section, pages."""
    return " · ".join(location(readable_source(source) or fallback, section, pages))


def readable_source(source: str | None) -> str:
    """A source as a person reads it: relative to the working directory when inside it."""
    if source is None:
        return ""
    if URL.match(source):
        return source
    relative = os.path.relpath(source)
    return source if relative.startswith("..") else relative
