"""What the rule-based extractor takes for a name, beyond the port's contract."""

from __future__ import annotations

import pytest

from retrieval.adapters.extraction.rule_based_entities import RuleBasedEntityExtractor


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("He joined the Bank of America in 1990.", ["Bank of America"]),
        ("She read The Lord of the Rings twice.", ["The Lord of the Rings"]),
        ("The Lord of the Rings is long.", ["Lord of the Rings"]),
        ("Charles de Gaulle, Marks & Spencer.", ["Charles de Gaulle", "Marks & Spencer"]),
        ("It was written by J. R. R. Tolkien in Oxford.", ["J. R. R. Tolkien", "Oxford"]),
        ("The crew of Apollo 11 landed in 1969.", ["Apollo 11"]),
        ("He won at the 1970 Asian Games.", ["1970 Asian Games", "Asian Games"]),
        ("He won in 1970. Asian Games followed in Asia.", ["Asian Games", "Asia"]),
        ("METHODS AND RESULTS Clinical Trials Unit saw it.", ["Clinical Trials Unit"]),
        (
            "METHODS AND RESULTS In Ghana, NASA and NBA Draft picks.",
            [
                "Ghana",
                "NASA and NBA Draft",
                "NASA",
                "NBA Draft",
            ],
        ),
        ("He led the 6th Armored Division.", ["6th Armored Division", "Armored Division"]),
        ('He sang "Blowin\' in the Wind" at Newport.', ["Blowin' in the Wind", "Newport"]),
        ("Released in 1945, the film starred Shirley Temple.", ["Shirley Temple"]),
        ("Later, it rained. Born late, he wept. Ghana won.", []),
        ("Ghana is in Africa. It borders Togo, as Ghana says.", ["Ghana", "Africa", "Togo"]),
        ("In Ghana an iPhone sold well.", ["Ghana", "iPhone"]),
        ("Then I left with Dr. Who.", ["Dr. Who"]),
        ("the Tinted Windows album\nTinted Windows is a band", ["Tinted Windows"]),
        ('He said "it was fine" and left.', []),
        ("It reached No. 1 in May.", ["May"]),
        (
            "Later Jorge Lozano and Todd Witsken won.",
            ["Jorge Lozano and Todd Witsken", "Jorge Lozano", "Todd Witsken"],
        ),
    ],
)
async def test_names_by_shape(text: str, names: list[str]) -> None:
    assert await RuleBasedEntityExtractor().extract(text) == names


async def test_a_paragraph_of_the_kind_a_second_hop_follows() -> None:
    text = (
        "Modern Tales is a webcomics site launched on March 2, 2002 by Joey Manley, the Modern "
        'Tales publisher. Gene Yang\'s National Book Award finalist "American Born Chinese" was '
        "published as a webcomic on Modern Tales."
    )
    assert await RuleBasedEntityExtractor().extract(text) == [
        "Modern Tales", "March 2", "Joey Manley", "Gene Yang", "National Book Award",
        "American Born Chinese",
    ]  # fmt: skip
