"""How names are compared: a name a text mentions with a document's title, or with a query."""

from __future__ import annotations

import re
import unicodedata

QUALIFIER = re.compile(r"\s*\([^()]*\)\s*$")
SEPARATORS = re.compile(r"[^\w]+|_+")
ARTICLE = re.compile(r"^(?:the|a|an) ")


def name_key(text: str) -> str:
    """``text`` as names are compared: a trailing parenthesised qualifier dropped (``Kiss and
    Tell (1945 film)``), accents dropped, case folded, every run of characters other than
    letters and digits one space, a leading article dropped (``The Beatles``)."""
    decomposed = unicodedata.normalize("NFKD", QUALIFIER.sub("", text))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    return ARTICLE.sub("", " ".join(SEPARATORS.sub(" ", plain).split()))


def names_in(text_key: str, name: str) -> bool:
    """Whether the text of key ``text_key`` names ``name``, as whole words."""
    key = name_key(name)
    return bool(key) and f" {key} " in f" {text_key} "
