"""Query normalisation: NFKC, no control characters, one space between words."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval.domain.query_text import QUERY_WINDOW_CHARS, fit_window, normalise


@pytest.mark.parametrize(
    ("asked", "used"),
    [
        ("  blister\tblight\n\ncontrol  ", "blister blight control"),
        ("\uff42\uff4c\uff49\uff53\uff54\uff45\uff52\u3000blight", "blister blight"),
        ("tea\x00 \x1bleaf\u200b plucking", "tea leaf plucking"),
        ("\ufb01eld \u00bd hectare", "field 1\u20442 hectare"),
        ("\x00\x01\u2028 \t", ""),
        ("Darjeeling — 二番摘み", "Darjeeling — 二番摘み"),
    ],
)
def test_examples(asked: str, used: str) -> None:
    assert normalise(asked) == used


@given(st.text())
def test_normalised_text_is_a_fixed_point(text: str) -> None:
    once = normalise(text)
    assert normalise(once) == once
    assert unicodedata.normalize("NFKC", once) == once


@given(st.text())
def test_no_control_characters_and_single_spaces(text: str) -> None:
    used = normalise(text)
    assert not any(unicodedata.category(c).startswith("C") for c in used)
    assert "  " not in used
    assert used == used.strip()
    assert all(c == " " or not c.isspace() for c in used)


@given(st.lists(st.text(alphabet=st.characters(categories=["L", "N"]), min_size=1), min_size=1))
def test_words_are_kept_in_order(words: list[str]) -> None:
    expected = " ".join(unicodedata.normalize("NFKC", word) for word in words)
    assert normalise("\t ".join(words)) == " ".join(expected.split())


@given(st.text(), st.integers(1, 300))
def test_a_fitted_query_is_a_prefix_within_both_bounds(text: str, max_words: int) -> None:
    used = normalise(text)
    fitted, truncated = fit_window(used, max_words)
    assert len(fitted) <= QUERY_WINDOW_CHARS
    assert len(fitted.split()) <= max_words
    assert used.startswith(fitted)
    assert truncated == (fitted != used)
    assert fit_window(fitted, max_words) == (fitted, False)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("茶" * 2_048, id="cjk-without-spaces"),
        pytest.param("blight" * 2_700, id="one-16200-character-word"),
        pytest.param("tea " * 200, id="200-short-words"),
    ],
)
def test_text_the_word_bound_lets_through_is_cut_at_the_character_bound(text: str) -> None:
    fitted, truncated = fit_window(normalise(text), 256)
    assert truncated
    assert QUERY_WINDOW_CHARS - 1 <= len(fitted) <= QUERY_WINDOW_CHARS
