"""Reading a model's judgement of which numbered passages are relevant."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.domain.ranking.relevance import Judgement, read_judgement


@pytest.mark.parametrize(
    "reply",
    [
        "2, 5",
        "2,5",
        "[2], [5]",
        "[2] [5]",
        "2 and 5",
        "5, 2, 5",
        "Relevant passages: 2, 5.",
        "Passages 2 and 5",
        '"2, 5"',
        "**2, 5**",
        "\n  2; 5\nPassage 2 names the disease, passage 5 its cure; 1 is off topic.",
    ],
)
def test_a_list_of_numbers_keeps_those_passages(reply: str) -> None:
    assert read_judgement(reply, 6) == Judgement(kept=(1, 4), understood=True)


@pytest.mark.parametrize("reply", ["none", "None.", "NONE", "Relevant: none", "None of them."])
def test_none_keeps_no_passage(reply: str) -> None:
    assert read_judgement(reply, 4) == Judgement(kept=(), understood=True)


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "   \n ",
        "I cannot tell which passages are relevant.",
        "2, 5 because they mention the disease",
        "7",
        "0, 2",
        "1-3",
        "00002",
        "123456789012345678901234567890",
        "No passage is relevant (2 maybe)",
    ],
)
def test_a_reply_that_cannot_be_read_keeps_every_passage(reply: str) -> None:
    assert read_judgement(reply, 6) == Judgement(kept=tuple(range(6)), understood=False)


@settings(max_examples=300)
@given(st.text(), st.integers(0, 40))
def test_never_more_out_than_in_and_in_order(reply: str, count: int) -> None:
    judgement = read_judgement(reply, count)
    assert list(judgement.kept) == sorted(set(judgement.kept))
    assert set(judgement.kept) <= set(range(count))
    if not judgement.understood:
        assert judgement.kept == tuple(range(count))


@settings(max_examples=200)
@given(st.text(alphabet=st.characters(categories=["L", "P", "Zs"])), st.integers(1, 40))
def test_a_reply_without_a_number_or_none_keeps_every_passage(reply: str, count: int) -> None:
    judgement = read_judgement(reply, count)
    if judgement.understood:
        assert judgement.kept == ()
        assert "none" in reply.lower()
    else:
        assert judgement.kept == tuple(range(count))


@settings(max_examples=200)
@given(
    st.integers(1, 32).flatmap(
        lambda count: st.tuples(st.just(count), st.sets(st.integers(1, count)))
    ),
    st.sampled_from([", ", ",", " ", "; ", " and "]),
    st.sampled_from(["{}", "[{}]", "#{}", "passage {}"]),
    st.sampled_from(["", "Relevant: ", "Answer: "]),
)
def test_a_well_formed_reply_reads_back_what_it_names(
    named: tuple[int, set[int]], separator: str, number: str, label: str
) -> None:
    count, numbers = named
    listed = separator.join(number.format(n) for n in sorted(numbers)) or "none"
    judgement = read_judgement(f"{label}{listed}\nbecause ...", count)
    assert judgement == Judgement(kept=tuple(sorted(n - 1 for n in numbers)), understood=True)
