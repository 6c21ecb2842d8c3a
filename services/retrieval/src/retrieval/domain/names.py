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
COMMA_QUALIFIER = re.compile(r"^([^,]+),\s+(\w)")


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


def title_keys(title: str) -> tuple[str, ...]:
    """The names a document's title gives what it is about: the title's key, and the key of
    its part before a comma followed by a capitalised word or a number, which qualifies it
    (``Newark, New Jersey``; ``John Spencer, 1st Earl Spencer``), as texts mention it."""
    key = name_key(title)
    qualified = COMMA_QUALIFIER.match(QUALIFIER.sub("", html.unescape(title)).strip())
    qualifies = qualified is not None and not qualified.group(2).islower()
    short = name_key(qualified.group(1)) if qualified and qualifies else ""
    return tuple(k for k in dict.fromkeys((key, short)) if k)
