"""Sources as the command line takes and shows them."""

from __future__ import annotations

from collections.abc import Sequence

from retrieval.adapters.files.local_sources import as_source as as_source
from retrieval.domain.provenance import location
from retrieval.source_display import readable_source


def located(source: str | None, fallback: str, section: str, pages: Sequence[int]) -> str:
    """Where a match or citation is, for a person: source (else ``fallback``), section, pages."""
    return " · ".join(location(readable_source(source) or fallback, section, pages))
