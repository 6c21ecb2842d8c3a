import pytest
from bm25s.stopwords import STOPWORDS_EN

from retrieval.domain.keyword_terms import ENGLISH_STOPWORDS, terms


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Pruning pruned prunes", ["prune", "prune", "prune"]),
        ("Fungicides controlling the blights", ["fungicid", "control", "blight"]),
        ("running RUNS Run", ["run", "run", "run"]),
    ],
)
def test_words_become_lowercase_snowball_stems(text: str, expected: list[str]) -> None:
    assert terms(text) == expected


def test_english_stopwords_are_dropped() -> None:
    assert terms("The tea and the rain of it") == ["tea", "rain"]
    assert terms("the and of it is") == []


def test_every_non_alphanumeric_character_splits() -> None:
    assert terms("blister-blight/fungus_spores, (2019) e.g.") == [
        "blister",
        "blight",
        "fungus",
        "spore",
        "2019",
        "e",
        "g",
    ]


def test_letters_and_digits_of_every_script_are_words() -> None:
    assert terms("Über Café: Чай δέντρα 茶叶") == ["über", "café", "чай", "δέντρα", "茶叶"]


def test_ligatures_and_full_width_forms_are_plain_letters() -> None:
    assert terms("\ufb01eld \uff34\uff25\uff21") == terms("field tea") == ["field", "tea"]


@pytest.mark.parametrize("text", ["", "   ", "?!.,;", "— … —"])
def test_a_text_without_words_has_no_terms(text: str) -> None:
    assert terms(text) == []


def test_the_stopwords_are_the_list_bm25s_ships() -> None:
    assert set(STOPWORDS_EN) == ENGLISH_STOPWORDS
