"""What every EntityExtractor must do. Subclass and provide an ``extractor`` fixture.

Only clear-cut names are asserted (people, places and works a rule and a trained tagger both
find), so that one suite holds for a rule-based extractor and a model alike.
"""

from __future__ import annotations

import re

import pytest

from retrieval.ports.entity_extractor import EntityExtractor

BIOGRAPHY = (
    "Kiss and Tell is a 1945 American comedy film starring Shirley Temple as Corliss Archer. "
    "In the film, Corliss Archer falls for a boy. Shirley Temple later served as United "
    "States Ambassador to Ghana."
)
PLAIN = "The leaves are picked by hand early in the morning. It rained after that."
UNICODE = "Jörgen Smit worked at the Goetheanum in Dornach for many years."


def folded(names: list[str]) -> list[str]:
    return [name.casefold() for name in names]


class EntityExtractorContract:
    async def test_people_are_found_in_the_order_first_mentioned(
        self, extractor: EntityExtractor
    ) -> None:
        names = folded(await extractor.extract(BIOGRAPHY))
        assert names.index("shirley temple") < names.index("corliss archer")
        assert "ghana" in names

    async def test_each_name_comes_once(self, extractor: EntityExtractor) -> None:
        names = folded(await extractor.extract(BIOGRAPHY))
        assert len(names) == len(set(names))

    async def test_names_are_normalised_and_written_in_the_text(
        self, extractor: EntityExtractor
    ) -> None:
        text = 'He drew "American Splendor",   Harvey  Pekar\'s comic, in Cleveland.'
        names = await extractor.extract(text)
        flat = " ".join(text.split()).casefold()
        assert "harvey pekar" in folded(names)
        for name in names:
            assert name == " ".join(name.split())
            assert re.match(r"^\w", name)
            assert re.search(r"\w$", name)
            assert not name.casefold().endswith(("'s", "\u2019s"))
            assert name.casefold() in flat

    async def test_letters_beyond_ascii_are_part_of_names(self, extractor: EntityExtractor) -> None:
        names = folded(await extractor.extract(UNICODE))
        assert "jörgen smit" in names
        assert "dornach" in names

    async def test_words_that_open_a_sentence_are_not_names(
        self, extractor: EntityExtractor
    ) -> None:
        assert await extractor.extract(PLAIN) == []

    @pytest.mark.parametrize("blank", ["", "   ", "\n\t"])
    async def test_a_blank_text_has_no_names(self, extractor: EntityExtractor, blank: str) -> None:
        assert await extractor.extract(blank) == []
