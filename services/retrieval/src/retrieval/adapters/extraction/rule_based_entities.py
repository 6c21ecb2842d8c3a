"""Names found by their shape, offline and without a model.

A name is a run of capitalised words (``Shirley Temple``, ``Jörgen Smit``, ``iPhone``), which
may hold numbers after its first word (``Apollo 11``), initials and abbreviations with their
full stops (``J. R. R. Tolkien``), an ampersand (``Marks & Spencer``) and up to two joining
words between capitalised ones (``Bank of America``, ``Lord of the Rings``, ``Kiss and Tell``,
``Charles de Gaulle``), with the year or ordinal right before it when there is one
(``1970 Asian Games``, ``6th Armored Division``: both the name with it and without it are
found); or a title in double quotes that starts with a capital or a digit
(``"Blowin' in the Wind"``). A run breaks at punctuation, at a line break, at any other
lower-case word and after a possessive (``Yang's``); a run inside a longer name (a word of a
quoted title) is not one of its own. ``and`` joins names as often as it lists them
(``Kiss and Tell``, ``Pieter Aldrich and Danie Visser``): a run joined by it is a name, and
so is each part on either side.

Two words or more written in capitals throughout (``METHODS AND RESULTS``, a structured
abstract's label) are a heading, not a name, and a heading's run ends at the first word not in
capitals, which opens a sentence; a single word in capitals (``NASA``) is a name like any
other.

A sentence's first word is capitalised whatever it is: common words (``The``, ``In``,
``However``, ``Born``) are dropped from the start of a run that opens a sentence, and a
single word opening a sentence is a name only when the text also writes it capitalised
inside a sentence. A lone letter (``I``) or a lone common word (``No``) is no name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from itertools import pairwise

from retrieval.domain.names import APOSTROPHES, POSSESSIVE, is_heading, normalised

TOKEN = re.compile(rf"[^\W_]+(?:[{APOSTROPHES}.\-][^\W_]+)*")
QUOTED = re.compile(r"[\"“]([^\W_][^\"“”\n]{0,119})[\"”]")
QUOTED_WORDS = 12
SENTENCE_END = re.compile(r"[.!?:;\n]")
LEADING_NUMBER = re.compile(r"^(?:\d{4}|\d{1,3}(?:st|nd|rd|th))$", re.IGNORECASE)
JOINERS = frozenset(
    {"of", "the", "and", "de", "del", "della", "der", "des", "di", "du", "da", "la", "le",
     "van", "von", "y"}
)  # fmt: skip
MAX_JOINERS = 2
ABBREVIATIONS = frozenset({"mr", "mrs", "ms", "dr", "st", "jr", "sr", "mt", "ft", "prof", "gen"})
COMMON_OPENERS = frozenset(
    {
        "a", "about", "above", "according", "across", "after", "afterwards", "against", "all",
        "along", "also", "although", "among", "an", "and", "another", "any", "are", "around",
        "as", "at", "before", "being", "below", "besides", "between", "both", "but", "by",
        "despite", "did", "do", "does", "during", "each", "either", "even", "every", "few",
        "following", "for", "from", "further", "had", "has", "have", "having", "he", "her",
        "here", "hers", "herself", "him", "himself", "his", "how", "however", "i", "if", "in",
        "including", "inside", "instead", "into", "is", "it", "its", "itself", "later", "like",
        "many", "meanwhile", "more", "moreover", "most", "much", "my", "near", "neither", "never",
        "nevertheless", "no", "nor", "not", "now", "of", "on", "once", "one", "only", "or",
        "other", "others", "otherwise", "our", "out", "outside", "over", "per", "perhaps",
        "prior", "rather", "several", "she", "since", "so", "some", "soon", "still", "such",
        "than", "that", "the", "their", "them", "then", "there", "thereafter", "therefore",
        "these", "they", "this", "those", "though", "through", "throughout", "thus", "to",
        "today", "together", "too", "toward", "towards", "under", "unlike", "until", "upon", "us",
        "very", "was", "we", "were", "what", "whatever", "when", "where", "whereas", "whether",
        "which", "while", "who", "whom", "whose", "why", "with", "within", "without", "yet",
        "you", "your", "born", "called", "considered", "located", "known", "named", "released",
        "based", "founded", "written", "directed", "produced", "published", "formed", "built",
        "established", "situated",
    }
)  # fmt: skip
"""Closed-class English words, and the participles that most often open a sentence of a
description (``Born in ...``, ``Released in ...``)."""
Span = tuple[int, int, str]
"""Where a name starts and ends in the text, and its text."""


@dataclass(frozen=True)
class Word:
    text: str
    start: int
    end: int
    opens_sentence: bool

    @property
    def capitalised(self) -> bool:
        first = self.text[0]
        return first.isupper() or (first.islower() and not self.text.islower())

    @property
    def shouted(self) -> bool:
        """Written in capitals throughout, two letters or more (``NASA``, ``METHODS``)."""
        return len(self.text) > 1 and self.text.isupper()

    @property
    def numeric(self) -> bool:
        return any(character.isdigit() for character in self.text)

    @property
    def initial(self) -> bool:
        return len(self.text) == 1 and self.text.isupper()


def continues(word: Word, gap: str) -> bool:
    """Whether a name may go on from ``word`` over ``gap``: spaces, or the full stop of an
    initial or an abbreviation (``J.``, ``Dr.``)."""
    if not gap.strip(" \t"):
        return True
    return gap.strip(" \t") == "." and (word.initial or word.text.casefold() in ABBREVIATIONS)


def words(text: str) -> list[Word]:
    found: list[Word] = []
    for match in TOKEN.finditer(text):
        opens = True
        if found:
            gap = text[found[-1].end : match.start()]
            opens = bool(SENTENCE_END.search(gap)) and not continues(found[-1], gap)
        found.append(Word(match.group(), match.start(), match.end(), opens))
    return found


def runs(text: str, found: list[Word]) -> list[list[Word]]:
    """The runs of capitalised words, with the joining words and numbers inside them."""
    result: list[list[Word]] = []
    current: list[Word] = []
    joining: list[Word] = []
    for previous, word in pairwise([None, *found]):
        gap = text[previous.end : word.start] if previous else ""
        attached = bool(current) and not word.opens_sentence and previous is not None
        attached = attached and not POSSESSIVE.search(previous.text)
        attached = attached and (continues(previous, gap) or gap.strip() == "&")
        if attached and not word.shouted and heading(current):
            attached, word = False, replace(word, opens_sentence=True)
        if attached and word.capitalised:
            current += [*joining, word]
            joining = []
        elif attached and word.numeric and not joining and gap.strip() != "&":
            current.append(word)
        elif attached and word.text.casefold() in JOINERS and len(joining) < MAX_JOINERS:
            joining.append(word)
        else:
            if current:
                result.append(current)
            current, joining = ([word] if word.capitalised else []), []
    if current:
        result.append(current)
    return result


def heading(run: list[Word]) -> bool:
    return is_heading(" ".join(word.text for word in run))


def trimmed(run: list[Word], capitalised_inside: set[str]) -> list[Word]:
    """The run without the common words that open its sentence (a lone word that opens a
    sentence is kept only when the text writes it capitalised elsewhere), and none for a
    lone letter or common word, or a heading."""
    if heading(run):
        return []
    if run[0].opens_sentence:
        start = 0
        while start < len(run) and run[start].text.casefold() in COMMON_OPENERS:
            start += 1
        if start == 0 and len(run) == 1 and run[0].text not in capitalised_inside:
            return []
        run = run[start:]
    if len(run) == 1 and (run[0].initial or run[0].text.casefold() in COMMON_OPENERS):
        return []
    return run if any(word.capitalised for word in run) else []


def with_parts(run: list[Word]) -> list[list[Word]]:
    """The run, then its parts on either side of each ``and`` in it."""
    cuts = [n for n, word in enumerate(run) if word.text.casefold() == "and"]
    if not cuts:
        return [run]
    bounds = [-1, *cuts, len(run)]
    parts = [run[start + 1 : end] for start, end in pairwise(bounds)]
    return [run, *(part for part in parts if part)]


def numbered(run: list[Word], found: list[Word], text: str) -> list[list[Word]]:
    """The run with the year or ordinal written right before it, if any (none when the run
    opens a sentence), then the run itself."""
    position = next(n for n, word in enumerate(found) if word.start == run[0].start)
    if position and not run[0].opens_sentence:
        number = found[position - 1]
        if LEADING_NUMBER.match(number.text) and not text[number.end : run[0].start].strip():
            return [[number, *run], run]
    return [run]


def name_spans(text: str) -> list[Span]:
    """The capitalised runs of ``text``, trimmed, with the year or ordinal before them and
    the parts of those joined by ``and``."""
    found = words(text)
    inside = {word.text for word in found if word.capitalised and not word.opens_sentence}
    return [
        (part[0].start, part[-1].end, text[part[0].start : part[-1].end])
        for kept in (trimmed(run, inside) for run in runs(text, found))
        if kept
        for whole in numbered(kept, found, text)
        for part in with_parts(whole)
    ]


def quoted_titles(text: str) -> list[Span]:
    return [
        (match.start(1), match.end(1), match.group(1))
        for match in QUOTED.finditer(text)
        if not match.group(1)[0].islower() and len(match.group(1).split()) <= QUOTED_WORDS
    ]


def outside(spans: list[Span], quoted: list[Span]) -> list[Span]:
    """The spans that lie in no quoted title."""
    return [span for span in spans if not any(a <= span[0] and span[1] <= b for a, b, _ in quoted)]


class RuleBasedEntityExtractor:
    """Capitalised runs and quoted titles, in the order of their first mention."""

    async def extract(self, text: str) -> list[str]:
        quoted = quoted_titles(text)
        spans = sorted([*outside(name_spans(text), quoted), *quoted], key=lambda s: (s[0], -s[1]))
        names: dict[str, str] = {}
        for _, _, span in spans:
            name = normalised(span)
            if name and name.casefold() not in names:
                names[name.casefold()] = name
        return list(names.values())
