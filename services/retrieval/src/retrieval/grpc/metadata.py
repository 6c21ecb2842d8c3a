"""The call metadata keys this service reads and writes."""

from __future__ import annotations

from collections.abc import Iterable

CORRELATION_ID_KEY = "x-correlation-id"
ERROR_FIELD_KEY = "x-error-field"
RETRY_AFTER_KEY = "x-retry-after-s"
AUTHORIZATION_KEY = "authorization"

Metadata = Iterable[tuple[str, str | bytes]]


def metadata_value(metadata: Metadata | None, key: str) -> str | None:
    """The first value of ``key`` (keys are lower case on the wire), or None."""
    for item_key, value in metadata or ():
        if item_key == key:
            return value if isinstance(value, str) else value.decode(errors="replace")
    return None
