"""Chunker properties: every word kept in order, neighbours overlap, no chunk over the limit."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.domain.chunking import chunk_markdown, chunk_section, split_sections

word = st.text(alphabet="abcdefghij", min_size=1, max_size=8)
sentence = st.lists(word, min_size=1, max_size=40).map(lambda ws: " ".join(ws) + ".")
paragraph = st.lists(sentence, min_size=1, max_size=8).map(" ".join)
section = st.tuples(
    st.sampled_from(["## Symptoms", "## Control", "### Detail", "# Title"]),
    st.lists(paragraph, min_size=1, max_size=4),
)
documents = st.lists(section, min_size=1, max_size=5).map(
    lambda sections: "\n\n".join(f"{h}\n\n" + "\n\n".join(ps) for h, ps in sections)
)
limits = st.tuples(st.integers(10, 120), st.integers(0, 40))


def body_words(markdown: str) -> list[str]:
    return [w for line in markdown.splitlines() if not line.startswith("#") for w in line.split()]


@settings(max_examples=200, deadline=None)
@given(documents, limits)
def test_chunks_cover_every_word_in_order(markdown: str, limit: tuple[int, int]) -> None:
    max_words, overlap = limit
    chunks = chunk_markdown("Title", markdown, max_words=max_words, overlap_words=overlap)
    rebuilt = [w for chunk in chunks for w in chunk.body.split()[chunk.overlap_words :]]
    assert rebuilt == body_words(markdown)


@settings(max_examples=200, deadline=None)
@given(documents, limits)
def test_no_chunk_exceeds_the_word_limit(markdown: str, limit: tuple[int, int]) -> None:
    max_words, overlap = limit
    for chunk in chunk_markdown("Title", markdown, max_words=max_words, overlap_words=overlap):
        assert len(chunk.body.split()) <= max_words


@settings(max_examples=200, deadline=None)
@given(documents, limits)
def test_neighbours_in_a_section_share_their_boundary(
    markdown: str, limit: tuple[int, int]
) -> None:
    max_words, overlap = limit
    for section in split_sections("Title", markdown):
        chunks = chunk_section(section, max_words, overlap)
        assert chunks[0].overlap_words == 0
        for before, after in itertools.pairwise(chunks):
            assert after.overlap_words == min(overlap, max_words // 2)
            shared = after.body.split()[: after.overlap_words]
            assert before.body.split()[len(before.body.split()) - len(shared) :] == shared


def test_breadcrumbs_follow_the_heading_path() -> None:
    markdown = "# Tea\n\nIntro.\n\n## Pests\n\nMites.\n\n### Control\n\nSpray.\n\n## Soil\n\npH."
    assert [s.breadcrumb for s in split_sections("Tea", markdown)] == [
        "Tea",
        "Tea > Pests",
        "Tea > Pests > Control",
        "Tea > Soil",
    ]


def test_chunk_content_starts_with_its_breadcrumb() -> None:
    chunks = chunk_markdown("Tea", "## Pests\n\nRed spider mites suck sap.")
    assert chunks[0].content == "Tea > Pests\n\nRed spider mites suck sap."


def test_paragraphs_stay_paragraphs() -> None:
    chunks = chunk_markdown("Tea", "One two.\n\nThree four.", max_words=50)
    assert chunks[0].body == "One two.\n\nThree four."
