"""Metadata values as a vector index stores them: Pinecone's type rules."""

from __future__ import annotations

import json
import math
from typing import Annotated, Any

from pydantic import BeforeValidator

MetadataValue = str | int | float | bool | list[str]

MAX_METADATA_BYTES = 40 * 1024
MODEL_FIELD = "embedding_model"
"""Written into every vector's metadata by the index wrapper: the model that made it."""


def json_size(value: Any) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON: how Pinecone measures metadata and requests."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def model_signature(model: str, dimension: int) -> str:
    """The value of ``MODEL_FIELD``."""
    return f"{model}@{dimension}"


def check_unicode(text: str) -> None:
    """ValueError when ``text`` holds a lone surrogate (a JSON ``"\\ud800"`` escape decodes to
    one): it has no UTF-8 form, so no hash, index or database takes it. Pydantic refuses one
    in a constrained string, but passes a plain ``str`` (metadata's keys and values) as is."""
    try:
        text.encode()
    except UnicodeEncodeError as error:
        raise ValueError(
            f"holds a lone surrogate at position {error.start}; text must be valid Unicode"
        ) from None


def check_metadata(metadata: Any) -> Any:
    """Reject what a vector index or MongoDB cannot store: nulls, nested objects, mixed lists,
    `$` keys (Pinecone), keys with a NUL character (BSON), text that is not Unicode. Dotted
    keys pass: MongoDB stores them in a subdocument, and nothing queries metadata by path."""
    if not isinstance(metadata, dict):
        raise ValueError("metadata must be an object")
    for key, value in metadata.items():
        if not key or key.startswith("$"):
            raise ValueError(f"metadata key {key!r} must be non-empty and not start with '$'")
        if "\x00" in key:
            raise ValueError(f"metadata key {key!r} contains a NUL character")
        for text in (key, *(value if isinstance(value, list) else [value])):
            if isinstance(text, str):
                try:
                    check_unicode(text)
                except ValueError as error:
                    raise ValueError(f"metadata {key!r}: {error}") from None
        if value is None:
            raise ValueError(f"metadata {key!r} is null; omit the key instead")
        if isinstance(value, list):
            if not all(isinstance(item, str) for item in value):
                raise ValueError(f"metadata {key!r} is a list; only lists of strings are allowed")
        elif isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"metadata {key!r} is {value}; numbers must be finite")
        elif not isinstance(value, str | int | float | bool):
            raise ValueError(
                f"metadata {key!r} has type {type(value).__name__}; "
                "allowed: string, number, boolean, list of strings"
            )
    return metadata


Metadata = Annotated[dict[str, MetadataValue], BeforeValidator(check_metadata)]


def copied(metadata: dict[str, MetadataValue]) -> dict[str, MetadataValue]:
    """A copy of metadata already checked, sharing no list with it: what validating it again
    would give, at a fraction of the cost."""
    copy = dict(metadata)
    for key, value in copy.items():
        if value.__class__ is list:
            copy[key] = value.copy()
    return copy
