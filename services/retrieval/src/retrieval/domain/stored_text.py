"""Text a store can hold: Unicode with a UTF-8 form."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator


def check_unicode(text: str) -> str:
    """``text``, or ValueError when it holds a lone surrogate (a JSON ``"\\ud800"`` escape
    decodes to one): such text has no UTF-8 form, so no hash, index or database takes it."""
    try:
        text.encode()
    except UnicodeEncodeError as error:
        raise ValueError(
            f"holds a lone surrogate at position {error.start}; text must be valid Unicode"
        ) from None
    return text


StoredText = Annotated[str, AfterValidator(check_unicode)]
