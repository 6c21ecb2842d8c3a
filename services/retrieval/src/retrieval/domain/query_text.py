"""What a query's text becomes before it is embedded or matched."""

from __future__ import annotations

import unicodedata

WHITESPACE_CATEGORIES = frozenset({"Zs", "Zl", "Zp"})
DROPPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn"})


def normalise(text: str) -> str:
    """Unicode NFKC; control and format characters dropped (tabs and line breaks count as
    spaces); every run of whitespace one space; no space at either end."""
    pieces: list[str] = []
    for character in unicodedata.normalize("NFKC", text):
        if character.isspace() or unicodedata.category(character) in WHITESPACE_CATEGORIES:
            pieces.append(" ")
        elif unicodedata.category(character) not in DROPPED_CATEGORIES:
            pieces.append(character)
    return " ".join("".join(pieces).split())


def truncate_words(text: str, max_words: int) -> tuple[str, bool]:
    """The first ``max_words`` words of a normalised text, and whether any were cut."""
    words = text.split(" ")
    if len(words) <= max_words:
        return text, False
    return " ".join(words[:max_words]), True
