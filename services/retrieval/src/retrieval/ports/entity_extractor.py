from __future__ import annotations

from typing import Protocol


class EntityExtractor(Protocol):
    """Finds the names a text mentions: people, places, organisations, works, events."""

    async def extract(self, text: str) -> list[str]:
        """The names in ``text`` in the order of their first mention, each once (names that
        differ only in case are one), normalised: written as in the text, with single spaces,
        without surrounding punctuation or quotes, without a possessive ``'s``. Words that
        are capitalised only because they open a sentence are not names. A text without
        names (a blank one included) gives ``[]``."""
        ...
