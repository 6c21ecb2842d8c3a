"""Chunker properties: every word kept in order, neighbours overlap, no chunk over the limit."""

from __future__ import annotations

import itertools
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.domain.chunking import MAX_CHUNK_CHARS, TextChunk, chunk_markdown, chunk_section
from retrieval.domain.chunking_sections import MAX_BREADCRUMB_CHARS, split_sections

word = st.text(alphabet="abcdefghij", min_size=1, max_size=8)
# Sentences run past the smallest word limits, sections past the largest: every cut is drawn.
sentence = st.lists(word, min_size=1, max_size=24).map(lambda ws: " ".join(ws) + ".")
paragraph = st.lists(sentence, min_size=1, max_size=4).map(" ".join)
section = st.tuples(
    st.sampled_from(["## Symptoms", "## Control", "### Detail", "# Title"]),
    st.lists(paragraph, min_size=1, max_size=3),
)
documents = st.lists(section, min_size=1, max_size=4).map(
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


long_word = st.one_of(
    word,
    st.text(alphabet="茶葉の栽培と収穫", min_size=1, max_size=900),
    st.text(alphabet="xyz", min_size=100, max_size=3000),
)
long_paragraph = st.lists(long_word, min_size=1, max_size=12).map(" ".join)
long_documents = st.lists(st.lists(long_paragraph, min_size=1, max_size=3), min_size=1).map(
    lambda sections: "\n\n".join("## Part\n\n" + "\n\n".join(ps) for ps in sections)
)


def characters(text: str) -> str:
    return "".join(text.split())


@settings(max_examples=150, deadline=None)
@given(long_documents, limits, st.integers(16, 2000))
def test_no_chunk_exceeds_the_character_limit_and_no_character_is_lost(
    markdown: str, limit: tuple[int, int], max_chars: int
) -> None:
    max_words, overlap = limit
    chunks = chunk_markdown(
        "Title", markdown, max_words=max_words, overlap_words=overlap, max_chars=max_chars
    )
    assert all(len(chunk.body) <= max_chars for chunk in chunks)
    assert all(len(chunk.body.split()) <= max_words for chunk in chunks)
    kept = "".join(characters(" ".join(c.body.split()[c.overlap_words :])) for c in chunks)
    assert kept == characters("".join(body_words(markdown)))


def test_one_enormous_word_is_split_into_chunks_of_bounded_size() -> None:
    enormous = "blight" * 2_700
    chunks = chunk_markdown("Tea", enormous)
    assert len(chunks) >= len(enormous) // MAX_CHUNK_CHARS
    assert max(len(chunk.content) for chunk in chunks) <= len("Tea\n\n") + MAX_CHUNK_CHARS
    assert "".join(chunk.body for chunk in chunks) == enormous


def test_text_without_spaces_is_split_into_chunks_of_bounded_size() -> None:
    cjk = "茶樹の新芽を摘み取り、萎凋、揉捻、発酵、乾燥の工程を経て紅茶になる。" * 150
    chunks = chunk_markdown("紅茶", f"## 製造\n\n{cjk}")
    assert len(chunks) > 1
    assert all(len(chunk.body) <= MAX_CHUNK_CHARS for chunk in chunks)
    assert "".join(chunk.body for chunk in chunks) == cjk


def test_a_huge_heading_is_cut_in_the_breadcrumb() -> None:
    chunks = chunk_markdown("Tea", f"## {'Frost ' * 5000}\n\nThatch the bushes.")
    assert len(chunks[0].breadcrumb) == MAX_BREADCRUMB_CHARS
    assert chunks[0].breadcrumb.startswith("Tea > Frost Frost")
    assert chunks[0].body == "Thatch the bushes."


def overlap_text(chunk: TextChunk) -> str:
    """The start of a chunk's body that repeats the end of the chunk before."""
    words = list(re.finditer(r"\S+", chunk.body))
    return chunk.body[: words[chunk.overlap_words - 1].end()] if chunk.overlap_words else ""


def test_the_overlap_keeps_the_line_breaks_of_the_text_it_repeats() -> None:
    poem = "\n".join(f"line {n} of the poem" for n in range(12))
    chunks = chunk_markdown("Poem", poem, max_words=20, overlap_words=6)
    assert len(chunks) > 2
    for before, after in itertools.pairwise(chunks):
        carried = overlap_text(after)
        assert after.overlap_words == 6
        assert "\n" in carried
        assert before.body.endswith(carried)
    assert all(chunk.body in poem for chunk in chunks)


def test_sentences_of_a_long_paragraph_keep_the_line_breaks_between_them() -> None:
    paragraph = "\n".join(f"Sentence {n} has five words." for n in range(10))
    chunks = chunk_markdown("Lines", paragraph, max_words=30, overlap_words=0)
    assert len(chunks) == 2
    assert [chunk.body for chunk in chunks] == [
        "\n".join(f"Sentence {n} has five words." for n in range(6)),
        "\n".join(f"Sentence {n} has five words." for n in range(6, 10)),
    ]


def test_breadcrumbs_are_plain_text() -> None:
    markdown = (
        "## [Comments](#comments)\n\nOne.\n\n"
        "### [Defining the page\\_title Function](#defining-the-page_title-function)\n\nTwo.\n\n"
        "### [`Debug` for *Programmer* Output](#debug) {#debug}\n\nThree."
    )
    assert [s.breadcrumb for s in split_sections("Rust", markdown)] == [
        "Rust > Comments",
        "Rust > Comments > Defining the page_title Function",
        "Rust > Comments > Debug for Programmer Output",
    ]
