"""Keys of stored embeddings: the same text, model and role always give the same key."""

from __future__ import annotations

import hashlib
from enum import StrEnum


class InputType(StrEnum):
    """The role a text is embedded in; E5 embeds the same text differently in each."""

    QUERY = "query"
    PASSAGE = "passage"


def embedding_key(model: str, dimension: int, input_type: InputType, text: str) -> str:
    """``<model>@<dimension>:<input type>:<sha256 of the UTF-8 text>``.

    Read from the right, the parts never run into one another, whatever the model is called.
    """
    digest = hashlib.sha256(text.encode()).hexdigest()
    return f"{model}@{dimension}:{input_type}:{digest}"
