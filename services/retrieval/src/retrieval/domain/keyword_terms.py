"""The lexical analysis of the keyword index: the terms a text is searched and found by.

NFKC-normalised (ligatures and full-width forms as their plain letters), lowercased, split
on every character that is not a Unicode letter or digit, English stopwords dropped, and
Snowball English stems. Needs PyStemmer (the ``embedded`` extra): import this module only
where that is installed.
"""

from __future__ import annotations

import re
import threading
import unicodedata

import Stemmer

ANALYSIS = "nfkc-lower-alnum/lucene-english-stopwords/snowball-english"
"""Names this analysis; an index stores it with its terms, which another analysis would miss."""

ENGLISH_STOPWORDS = frozenset(
    {
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into",
        "is", "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then",
        "there", "these", "they", "this", "to", "was", "will", "with",
    }
)  # fmt: skip
"""Lucene's English stop set, as bm25s ships it (importing bm25s would load all of it)."""

WORD = re.compile(r"[^\W_]+")
_stemmers = threading.local()


def _stemmer() -> Stemmer.Stemmer:
    # A Stemmer keeps state between calls: one per thread. Its word cache is off: on SciFact's
    # corpus stemming ran 1.5 times faster without it, and many times faster on a corpus
    # with more distinct words than the cache holds.
    stemmer = getattr(_stemmers, "english", None)
    if stemmer is None:
        stemmer = _stemmers.english = Stemmer.Stemmer("english", 0)
    return stemmer


def terms(text: str) -> list[str]:
    """The terms of ``text`` in order, repeats kept (they count as term frequency)."""
    words = WORD.findall(unicodedata.normalize("NFKC", text).lower())
    return _stemmer().stemWords([word for word in words if word not in ENGLISH_STOPWORDS])
