"""How names are compared: a name a text mentions with a document's title, or with a query."""

from __future__ import annotations

import html
import re
import unicodedata

APOSTROPHES = "'\u2019"
POSSESSIVE = re.compile(rf"[{APOSTROPHES}]s$", re.IGNORECASE)
QUALIFIER = re.compile(r"\s*\([^()]*\)\s*$")
SEPARATORS = re.compile(r"[^\w]+|_+")
ARTICLE = re.compile(r"^(?:the|a|an) ")
COMMA_QUALIFIER = re.compile(r"^([^,]+),\s+((\w)[^,]*)$")
QUALIFIER_WORDS = 4


def normalised(name: str) -> str:
    """A name as extractors give it: spaces single, no surrounding punctuation or quotes, no
    possessive ``'s``."""
    stripped = " ".join(name.split()).strip(f' .,;:!?"\u201c\u201d\u2018()[]{APOSTROPHES}')
    return POSSESSIVE.sub("", stripped).rstrip(" .,;:")


def name_key(text: str) -> str:
    """``text`` as names are compared: HTML character references read (``Ant &amp; Dec``), a
    trailing parenthesised qualifier dropped (``Kiss and Tell (1945 film)``), accents
    dropped, case folded, every run of characters other than letters and digits one space,
    a leading article dropped (``The Beatles``)."""
    decomposed = unicodedata.normalize("NFKD", QUALIFIER.sub("", html.unescape(text)))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    return ARTICLE.sub("", " ".join(SEPARATORS.sub(" ", plain).split()))


def names_in(text_key: str, name: str) -> bool:
    """Whether the text of key ``text_key`` names ``name``, as whole words."""
    key = name_key(name)
    return bool(key) and f" {key} " in f" {text_key} "


def is_heading(text: str) -> bool:
    """Two words or more written in capitals throughout (``METHODS AND RESULTS``): a heading,
    which names nothing."""
    words = text.split()
    return len(words) > 1 and all(len(word) > 1 and word.isupper() for word in words)


def title_keys(title: str) -> tuple[str, ...]:
    """The names a document's title gives what it is about: the title's key, and the key of
    part before its one comma when what follows is a qualifier, up to four words starting
    with a capital or a number (``Newark, New Jersey``; ``John Spencer, 1st Earl Spencer``),
    as texts mention it. A title written as a heading names nothing."""
    if is_heading(title):
        return ()
    key = name_key(title)
    qualified = COMMA_QUALIFIER.match(QUALIFIER.sub("", html.unescape(title)).strip())
    qualifies = qualified is not None and not qualified.group(3).islower()
    qualifies = qualifies and len(qualified.group(2).split()) <= QUALIFIER_WORDS
    short = name_key(qualified.group(1)) if qualified and qualifies else ""
    return tuple(k for k in dict.fromkeys((key, short)) if k)
