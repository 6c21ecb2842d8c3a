"""Numbered context within a token budget, and the citations an answer gives back."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval.domain.context import (
    DEFAULT_DELIMITER,
    DEFAULT_TEMPLATE,
    Citation,
    approximate_tokens,
    build_context,
    citation_coverage,
    parse_citations,
)
from retrieval.domain.models import RetrievalMatch
from retrieval.errors import InvalidRequestError


def match(chunk_id: str, content: str = "Tea grows on hills.", **metadata) -> RetrievalMatch:
    return RetrievalMatch(
        chunk_id=chunk_id,
        content=content,
        score=1.0,
        document_id=f"doc-{chunk_id}",
        title=f"Title {chunk_id}",
        domain="tea_cultivation",
        metadata=metadata,
    )


def words(count: int) -> str:
    return " ".join(["leaf"] * count)


def test_passages_are_numbered_in_match_order_and_delimited() -> None:
    built = build_context(
        [match("a", "Blight spreads."), match("b", "Rain falls.")], budget_tokens=1000
    )
    assert built.text == (
        "[1] Title a (tea_cultivation)\nBlight spreads."
        f"{DEFAULT_DELIMITER}"
        "[2] Title b (tea_cultivation)\nRain falls."
    )
    assert built.citations == (
        Citation(
            number=1,
            chunk_id="a",
            document_id="doc-a",
            title="Title a",
            domain="tea_cultivation",
        ),
        Citation(
            number=2,
            chunk_id="b",
            document_id="doc-b",
            title="Title b",
            domain="tea_cultivation",
        ),
    )
    assert built.tokens == approximate_tokens(built.text)
    assert built.dropped == ()
    assert not built.truncated


def test_a_chunk_that_does_not_fit_is_skipped_and_smaller_later_ones_still_fit() -> None:
    built = build_context(
        [match("a", words(10)), match("big", words(500)), match("c", words(10))],
        budget_tokens=60,
    )
    assert [(c.number, c.chunk_id) for c in built.citations] == [(1, "a"), (2, "c")]
    assert built.dropped == ("big",)
    assert built.truncated
    assert "[2] Title c" in built.text
    assert "Title big" not in built.text


def test_a_chunk_larger_than_the_whole_budget_alone_is_dropped() -> None:
    built = build_context([match("big", words(500))], budget_tokens=100)
    assert built.text == ""
    assert built.citations == ()
    assert built.tokens == 0
    assert built.dropped == ("big",)
    assert built.truncated


def test_the_budget_counts_with_the_given_counter() -> None:
    passages = [match("a", "x" * 40), match("b", "y" * 40)]
    one = build_context(passages[:1], budget_tokens=10_000, count_tokens=len)
    built = build_context(passages, budget_tokens=one.tokens, count_tokens=len)
    assert built.tokens == len(built.text) == one.tokens
    assert built.dropped == ("b",)


def test_the_same_chunk_twice_is_included_once() -> None:
    built = build_context([match("a"), match("b"), match("a")], budget_tokens=1000)
    assert [c.chunk_id for c in built.citations] == ["a", "b"]
    assert built.text.count("Title a") == 1
    assert built.dropped == ()


def test_template_fields_come_from_the_chunk_and_its_metadata() -> None:
    built = build_context(
        [
            match("a", "Wet.", region="Assam", varieties=["assamica", "sinensis"], year=2020),
            match("b", "Dry."),
        ],
        budget_tokens=1000,
        template="{number}|{document_id}|{region}|{varieties}|{year}|{content}",
        delimiter="\n",
    )
    assert built.text == "1|doc-a|Assam|assamica, sinensis|2020|Wet.\n2|doc-b|N/A|N/A|N/A|Dry."


def test_chunk_fields_win_over_metadata_of_the_same_name() -> None:
    built = build_context(
        [match("a", title="from metadata")], budget_tokens=1000, template="{title}"
    )
    assert built.text == "Title a"


@pytest.mark.parametrize(
    "template", ["{", "}", "{0}", "{}", "{title.upper}", "{title[0]}", "{title:d}", "{number!z}"]
)
def test_a_malformed_template_is_an_invalid_request(template: str) -> None:
    with pytest.raises(InvalidRequestError) as raised:
        build_context([match("a")], budget_tokens=1000, template=template)
    assert raised.value.field == "template"


def test_a_malformed_template_is_refused_even_without_matches() -> None:
    with pytest.raises(InvalidRequestError):
        build_context([], budget_tokens=1000, template="{title:d}")


def test_a_budget_below_one_is_an_invalid_request() -> None:
    with pytest.raises(InvalidRequestError) as raised:
        build_context([match("a")], budget_tokens=0)
    assert raised.value.field == "budget_tokens"


# Counts by OpenAI's cl100k_base tokenizer: "tiktoken is great!" is the example of OpenAI's
# cookbook (6 tokens); the others split at every word and punctuation mark, and digits in
# groups of three.
@pytest.mark.parametrize(
    ("text", "gpt_tokens"),
    [
        ("tiktoken is great!", 6),
        ("Hello, world!", 4),
        ("The quick brown fox jumps over the lazy dog.", 10),
        ("1234567890", 4),
    ],
)
def test_approximate_tokens_does_not_undercount_gpt_tokenizers(text: str, gpt_tokens: int) -> None:
    assert gpt_tokens <= approximate_tokens(text) <= 2 * gpt_tokens


def test_approximate_tokens_of_english_prose_stays_near_words() -> None:
    prose = (
        "Blister blight is a fungal disease of tea that attacks young leaves during wet "
        "monsoon weather. Planters spray copper fungicides and prune affected bushes."
    )
    words_in_prose = len(prose.split())
    assert words_in_prose <= approximate_tokens(prose) <= 2 * words_in_prose


def test_approximate_tokens_counts_line_breaks_and_symbols() -> None:
    assert approximate_tokens("") == 0
    assert approximate_tokens("a\n\nb") == 3
    assert approximate_tokens("a b") == 2
    assert approximate_tokens("日本") == 2


CONTEXT = build_context([match("a"), match("b"), match("c")], budget_tokens=1000).citations


def test_parse_citations_reads_every_form_in_order_of_first_appearance() -> None:
    cited, unknown = parse_citations("Wet [3]. Hills [1, 2]. Again [3][1].", CONTEXT)
    assert [c.number for c in cited] == [3, 1, 2]
    assert unknown == []


def test_parse_citations_reports_numbers_the_context_lacks() -> None:
    cited, unknown = parse_citations("Yes [2][7]. No [0], [7] and [9, 2].", CONTEXT)
    assert [c.chunk_id for c in cited] == ["b"]
    assert unknown == [7, 0, 9]


def test_parse_citations_ignores_brackets_that_are_not_numbers() -> None:
    assert parse_citations("See [a] and [1a] and [ ].", CONTEXT) == ([], [])


@pytest.mark.parametrize(
    ("answer", "coverage"),
    [
        ("", 0.0),
        ("   \n", 0.0),
        ("Tea grows on hills [1].", 1.0),
        ("Tea grows on hills. [1] Blight spreads in 3.5 days.", 0.5),
        ("Tea grows on hills.[1][2] Blight spreads! Rain falls? It does [3]", 0.5),
        ("- Pruning every four years [2]\n- Plucking weekly", 0.5),
        ("I do not know.", 0.0),
    ],
)
def test_citation_coverage_is_the_share_of_cited_sentences(answer: str, coverage: float) -> None:
    assert citation_coverage(answer) == coverage


def test_citation_coverage_with_citations_counts_only_known_numbers() -> None:
    answer = "Tea grows on hills [1]. Blight spreads [7]."
    assert citation_coverage(answer) == 1.0
    assert citation_coverage(answer, citations=CONTEXT) == 0.5


MATCHES = st.lists(
    st.builds(
        lambda chunk_id, content, metadata: match(chunk_id, content, **metadata),
        st.sampled_from("abcdefgh"),
        st.text(min_size=1, max_size=300),
        st.sampled_from([{}, {"region": "Assam"}]),
    ),
    max_size=12,
)


def rendered(number: int, chunk: RetrievalMatch) -> str:
    return DEFAULT_TEMPLATE.format(
        number=number, title=chunk.title, domain=chunk.domain, content=chunk.content, where=""
    )


def first(matches: list[RetrievalMatch], chunk_id: str) -> RetrievalMatch:
    return next(m for m in matches if m.chunk_id == chunk_id)


@given(matches=MATCHES, budget=st.integers(min_value=1, max_value=400))
def test_context_stays_in_budget_numbered_without_gaps(
    matches: list[RetrievalMatch], budget: int
) -> None:
    built = build_context(matches, budget_tokens=budget)
    assert built.tokens == approximate_tokens(built.text) <= budget
    assert [c.number for c in built.citations] == list(range(1, len(built.citations) + 1))
    assert built.text == DEFAULT_DELIMITER.join(
        rendered(c.number, first(matches, c.chunk_id)) for c in built.citations
    )
    included = [c.chunk_id for c in built.citations]
    assert sorted([*included, *built.dropped]) == sorted({m.chunk_id for m in matches})
    first_seen = list(dict.fromkeys(m.chunk_id for m in matches))
    assert included == [chunk_id for chunk_id in first_seen if chunk_id in included]
    assert built.truncated == bool(built.dropped)


@given(matches=MATCHES, budget=st.integers(min_value=1, max_value=400))
def test_a_dropped_chunk_did_not_fit_where_it_came(
    matches: list[RetrievalMatch], budget: int
) -> None:
    built = build_context(matches, budget_tokens=budget)
    for dropped in built.dropped:
        chunk = first(matches, dropped)
        before = build_context(matches[: matches.index(chunk)], budget_tokens=budget)
        passage = rendered(len(before.citations) + 1, chunk)
        text = f"{before.text}{DEFAULT_DELIMITER}{passage}" if before.citations else passage
        assert approximate_tokens(text) > budget


@given(matches=MATCHES)
def test_missing_metadata_renders_not_available(matches: list[RetrievalMatch]) -> None:
    built = build_context(matches, budget_tokens=10**6, template="{number}:{region}", delimiter=" ")
    assert built.text == " ".join(
        f"{c.number}:{first(matches, c.chunk_id).metadata.get('region', 'N/A')}"
        for c in built.citations
    )


@given(matches=MATCHES)
def test_citing_every_passage_gives_back_every_citation(matches: list[RetrievalMatch]) -> None:
    built = build_context(matches, budget_tokens=10_000)
    answer = " ".join(f"Claim {c.number} holds [{c.number}]." for c in built.citations)
    cited, unknown = parse_citations(answer, built.citations)
    assert cited == list(built.citations)
    assert unknown == []
    assert citation_coverage(answer, citations=built.citations) == (1.0 if cited else 0.0)


@given(
    cited=st.lists(st.integers(min_value=0, max_value=50), min_size=1, max_size=8),
    matches=MATCHES,
)
def test_numbers_beyond_the_context_are_unknown(
    cited: list[int], matches: list[RetrievalMatch]
) -> None:
    built = build_context(matches, budget_tokens=10_000)
    known, unknown = parse_citations(" ".join(f"[{n}]" for n in cited), built.citations)
    in_context = {c.number for c in built.citations}
    assert [c.number for c in known] == [n for n in dict.fromkeys(cited) if n in in_context]
    assert unknown == [n for n in dict.fromkeys(cited) if n not in in_context]


def test_passages_and_citations_say_where_a_sourced_chunk_comes_from() -> None:
    sourced = match("a", "Blight spreads.").model_copy(
        update={"source": "/kb/guide.pdf", "section": "Pests > Blight", "pages": (3, 4)}
    )
    built = build_context([sourced, match("b", "Rain falls.")], budget_tokens=1000)
    assert built.text.startswith(
        "[1] Title a (tea_cultivation) — /kb/guide.pdf, § Pests > Blight, pp. 3-4\n"
    )
    assert f"{DEFAULT_DELIMITER}[2] Title b (tea_cultivation)\nRain falls." in built.text
    first = built.citations[0]
    assert (first.source, first.section, first.pages) == ("/kb/guide.pdf", "Pests > Blight", (3, 4))
