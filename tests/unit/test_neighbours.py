"""Small to big: spans of neighbouring chunks, their merged text, widened matches."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.domain.chunking import chunk_markdown
from retrieval.domain.chunking_sections import split_sections
from retrieval.domain.models import RagChunk, RetrievalMatch
from retrieval.domain.neighbours import (
    around,
    merged_text,
    neighbour_ids,
    position_of,
    spans,
    widened,
)

DIGEST = "0123456789abcdef"


def chunk_id(document_id: str, position: int) -> str:
    return f"{document_id}#{position:04d}-{DIGEST}"


def chunk(document_id: str, position: int, content: str | None = None) -> RagChunk:
    return RagChunk(
        chunk_id=chunk_id(document_id, position),
        document_id=document_id,
        namespace="ns",
        title=document_id,
        domain="tea_cultivation",
        position=position,
        content=content or f"{document_id}-{position}",
    )


def match(document_id: str, position: int, score: float = 0.5) -> RetrievalMatch:
    return RetrievalMatch(
        chunk_id=chunk_id(document_id, position),
        content=f"{document_id}-{position}",
        score=score,
        scores={"dense": score},
        document_id=document_id,
        title=document_id,
        domain="tea_cultivation",
        metadata={"region": "assam"},
    )


def test_the_position_is_read_from_the_chunk_id() -> None:
    assert position_of("leaf-blight#0007-0123456789abcdef") == 7
    assert position_of("long#12345-0123456789abcdef") == 12345
    assert position_of("no-position") is None


def test_around_stays_at_or_above_zero() -> None:
    assert around([1, 7], 2) == {0, 1, 2, 3, 5, 6, 7, 8, 9}
    assert around([4], 0) == {4}


def test_a_match_widens_up_to_the_next_match_and_not_over_it() -> None:
    present = range(10)
    assert spans([3, 4], present, 2) == [range(1, 4), range(4, 7)]
    # The best match takes the chunks it shares with the next; the next gets the rest.
    assert spans([3, 6], present, 2) == [range(1, 6), range(6, 9)]
    assert spans([6, 3], present, 2) == [range(4, 9), range(1, 4)]


def test_a_span_stops_at_a_missing_chunk_and_at_the_document_ends() -> None:
    assert spans([0], range(3), 2) == [range(0, 3)]
    assert spans([5], {3, 5, 6}, 2) == [range(5, 7)]


positions_and_matches = st.integers(1, 15).flatmap(
    lambda count: st.tuples(
        st.just(count),
        st.lists(st.integers(0, count - 1), min_size=1, max_size=count, unique=True),
        st.sets(st.integers(0, count - 1)),
        st.integers(0, 4),
    )
)


@settings(max_examples=300)
@given(positions_and_matches)
def test_spans_are_disjoint_stretches_around_their_match(
    drawn: tuple[int, list[int], set[int], int],
) -> None:
    _, matches, present, radius = drawn
    present |= set(matches)
    found = spans(matches, present, radius)
    assert len(found) == len(matches)
    seen: set[int] = set()
    for position, span in zip(matches, found, strict=True):
        assert position in span
        assert set(span) <= present
        assert all(abs(p - position) <= radius for p in span)
        assert set(span) & set(matches) == {position}
        assert not seen & set(span)
        seen |= set(span)
    if radius == 0:
        assert found == [range(p, p + 1) for p in matches]


@settings(max_examples=300)
@given(positions_and_matches)
def test_spans_cover_every_chunk_near_a_match_of_a_whole_document(
    drawn: tuple[int, list[int], set[int], int],
) -> None:
    count, matches, _, radius = drawn
    covered = {p for span in spans(matches, range(count), radius) for p in span}
    assert covered == around(matches, radius) & set(range(count))


def test_consecutive_chunks_of_one_section_share_their_overlap_once() -> None:
    first = "Tea > Pruning\n\nPrune in the cold season.\n\nCut above a bud to"
    second = "Tea > Pruning\n\nCut above a bud to keep the frame low."
    assert merged_text([first, second]) == (
        "Tea > Pruning\n\nPrune in the cold season.\n\nCut above a bud to keep the frame low."
    )


def test_a_new_section_follows_after_a_blank_line_with_its_heading() -> None:
    first = "Tea > Pruning\n\nPrune in the cold season."
    second = "Tea > Plucking\n\nPluck two leaves and a bud."
    assert merged_text([first, second]) == f"{first}\n\n{second}"


def test_chunks_of_one_section_without_overlap_join_with_a_blank_line() -> None:
    first = "Tea > Pruning\n\nPrune in the cold season."
    second = "Tea > Pruning\n\nCut above a bud."
    assert merged_text([first, second]) == f"{first}\n\nCut above a bud."


def test_one_chunk_is_its_own_text() -> None:
    assert merged_text(["Tea\n\nbody"]) == "Tea\n\nbody"


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, str]:
    """A title and a markdown body of sections and paragraphs, no word used twice."""
    words = iter(f"w{n}" for n in range(10_000))
    title = next(words)
    sections = []
    for level in draw(st.lists(st.integers(0, 3), min_size=1, max_size=4)):
        heading = f"{'#' * level} {next(words)}\n\n" if level else ""
        paragraphs = [
            " ".join(next(words) for _ in range(size))
            for size in draw(st.lists(st.integers(1, 40), min_size=1, max_size=4))
        ]
        sections.append(heading + "\n\n".join(paragraphs))
    return title, "\n\n".join(sections)


@settings(max_examples=200, deadline=None)
@given(documents(), st.integers(4, 30), st.integers(0, 10))
def test_merging_every_chunk_gives_back_the_document_words_once(
    document: tuple[str, str], max_words: int, overlap_words: int
) -> None:
    title, markdown = document
    pieces = chunk_markdown(title, markdown, max_words=max_words, overlap_words=overlap_words)
    expected = [
        word
        for section in split_sections(title, markdown)
        for text in (section.breadcrumb, *section.paragraphs)
        for word in text.split()
    ]
    assert merged_text([piece.content for piece in pieces]).split() == expected


@settings(max_examples=100, deadline=None)
@given(st.integers(8, 40), st.integers(0, 8), st.sampled_from(["```", "~~~~", "```rust"]))
def test_a_code_block_cut_between_chunks_is_whole_again_when_merged(
    lines: int, overlap_words: int, fence: str
) -> None:
    code = "\n".join(f"let x{n} = {n};" for n in range(lines))
    markdown = f"Before the code.\n\n{fence}\n{code}\n{fence[:3] if fence[0] == '`' else fence}"
    pieces = chunk_markdown("T", markdown, max_words=12, overlap_words=overlap_words)
    assert len(pieces) > 1
    merged = merged_text([piece.content for piece in pieces])
    assert merged == f"T\n\n{markdown}"


def test_a_match_is_widened_to_its_neighbours_and_keeps_the_rest() -> None:
    found = [match("d", 2, score=0.9)]
    widen = widened(found, [chunk("d", 0), chunk("d", 1), chunk("d", 3), chunk("d", 4)], 1)
    assert widen == [found[0].model_copy(update={"content": "d-1\n\nd-2\n\nd-3"})]


def test_matches_sharing_neighbours_show_each_chunk_once() -> None:
    found = [match("d", 2), match("d", 3), match("e", 0)]
    neighbours = [chunk("d", p) for p in (0, 1, 4, 5)] + [chunk("e", 1)]
    assert [m.content for m in widened(found, neighbours, 2)] == [
        "d-0\n\nd-1\n\nd-2",
        "d-3\n\nd-4\n\nd-5",
        "e-0\n\ne-1",
    ]


def test_a_match_whose_id_names_no_position_is_left_as_it_is() -> None:
    odd = match("d", 1).model_copy(update={"chunk_id": "d-without-position"})
    assert widened([odd], [chunk("d", 0), chunk("d", 2)], 1) == [odd]


def test_neighbour_ids_are_the_listed_chunks_near_a_match_but_not_matches() -> None:
    listed = {
        "d": [chunk_id("d", p) for p in range(8)] + ["d-unpositioned"],
        "e": [chunk_id("e", p) for p in range(3)],
        "f": [chunk_id("f", p) for p in range(3)],
    }
    wanted = neighbour_ids([match("d", 2), match("d", 3), match("e", 0)], listed, 1)
    assert wanted == [chunk_id("d", 1), chunk_id("d", 4), chunk_id("e", 1)]


@settings(max_examples=200)
@given(positions_and_matches)
def test_every_chunk_shows_once_and_the_matches_stay_in_order(
    drawn: tuple[int, list[int], set[int], int],
) -> None:
    count, positions, _, radius = drawn
    found = [match("d", p, score=1 - n / 100) for n, p in enumerate(positions)]
    others = [chunk("d", p) for p in range(count) if p not in positions]
    result = widened(found, others, radius)
    assert [m.model_copy(update={"content": ""}) for m in result] == [
        m.model_copy(update={"content": ""}) for m in found
    ]
    shown = [int(part.split("-")[1]) for m in result for part in m.content.split("\n\n")]
    assert sorted(shown) == sorted(around(positions, radius) & set(range(count)))
    for position, widened_match in zip(positions, result, strict=True):
        assert f"d-{position}" in widened_match.content.split("\n\n")
    if radius == 0:
        assert result == found
