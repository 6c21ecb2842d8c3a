"""Reading a language model's judgement of which numbered passages are relevant to a query."""

from __future__ import annotations

import re
from dataclasses import dataclass

from retrieval.domain.chat import first_line

NUMBER = re.compile(r"[0-9]+")
FILLER = re.compile(r"(?:[\s,;.#*\[\]()]|\band\b|\bpassages?\b)*", re.IGNORECASE)
"""What may stand between the numbers of a list: separators, brackets, "and", "passage"."""
NONE = re.compile(r"none\b", re.IGNORECASE)


@dataclass(frozen=True)
class Judgement:
    """Which passages of a batch to keep."""

    kept: tuple[int, ...]
    """Indices (from 0, ascending) of the passages kept."""
    understood: bool
    """False when the judgement could not be had: every passage is then kept."""

    @classmethod
    def unread(cls, count: int) -> Judgement:
        """Keep all ``count`` passages: the model failed or its reply could not be read."""
        return cls(tuple(range(count)), understood=False)


def read_judgement(reply: str, count: int) -> Judgement:
    """The passages, numbered 1 to ``count``, a model's reply names relevant.

    The reply's first non-blank line is read, after a label ending in a colon if there is
    one ("Relevant passages: 2, 5"). A line that starts with the word "none" and holds no
    number keeps no passage; a list of numbers ("2, 5", "[2] [5]", "2 and 5") keeps those.
    Anything else (words besides the list, a number outside 1 to ``count``, no number)
    cannot be read, and every passage is kept.
    """
    line = first_line(reply).rpartition(":")[2].strip(" .*[]()")
    runs = NUMBER.findall(line)
    if not runs:
        return Judgement((), understood=True) if NONE.match(line) else Judgement.unread(count)
    if any(len(run) > len(str(count)) for run in runs):
        return Judgement.unread(count)
    numbers = {int(run) for run in runs}
    if not FILLER.fullmatch(NUMBER.sub(" ", line)) or not numbers <= set(range(1, count + 1)):
        return Judgement.unread(count)
    return Judgement(tuple(sorted(number - 1 for number in numbers)), understood=True)
