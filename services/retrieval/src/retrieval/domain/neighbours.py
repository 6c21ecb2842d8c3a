"""Small to big: a match widened to the chunks around it in its document, as one text.

A match found by a small chunk is returned with the chunks at positions ``p - n`` to
``p + n`` of its document, so a reader gets the surrounding text. Matches of one document
share that text out, best first: each chunk shows once in a result, a match's own chunk
always in that match, and a match widens only up to another match or a chunk an earlier
match took, so every widened text is one stretch of consecutive chunks.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from itertools import islice, pairwise

from retrieval.domain.chunking_sections import Fence
from retrieval.domain.models import RagChunk, RetrievalMatch

POSITION = re.compile(r"#(\d+)-[0-9a-f]+$")
BLANK_LINE = "\n\n"
WORD = re.compile(r"\S+")


def position_of(chunk_id: str) -> int | None:
    """The position a chunk id names (``<document>#<position>-<digest>``), or None."""
    found = POSITION.search(chunk_id)
    return int(found.group(1)) if found else None


def around(positions: Iterable[int], radius: int) -> set[int]:
    """Positions at most ``radius`` from one of ``positions`` (none below 0)."""
    return {
        near
        for position in positions
        for near in range(max(0, position - radius), position + radius + 1)
    }


def spans(matches: Sequence[int], present: Collection[int], radius: int) -> list[range]:
    """The positions each match of one document widens to, in the order given (best first).

    A match takes its own position, then, on each side, the next positions up to ``radius``
    away while they are ``present`` and neither a match nor taken by an earlier match.
    """
    matched = set(matches)
    taken: set[int] = set()

    def free(position: int) -> bool:
        return position in present and position not in taken and position not in matched

    widened: list[range] = []
    for position in matches:
        low = high = position
        while position - low < radius and free(low - 1):
            low -= 1
        while high - position < radius and free(high + 1):
            high += 1
        span = range(low, high + 1)
        taken.update(span)
        widened.append(span)
    return widened


def heading_and_body(text: str) -> tuple[str, str]:
    """A chunk's heading (its breadcrumb line, before the first blank line) and its body;
    a text without a blank line is all body."""
    heading, separator, body = text.partition(BLANK_LINE)
    return (heading, body) if separator else ("", text)


def shared_words(before: str, after: str) -> int:
    """The most words ``after`` starts with that ``before`` ends with."""
    tail, head = before.split(), after.split()
    for count in range(min(len(tail), len(head)), 0, -1):
        if tail[-count] == head[0] and tail[-count:] == head[:count]:
            return count
    return 0


def reopened_fence(previous_body: str, body: str) -> tuple[str, str] | None:
    """Where the chunker cut a fenced code block, it closed it at the end of one chunk and
    opened it again at the start of the next: then the two bodies without those lines."""
    kept, _, closing = previous_body.rpartition("\n")
    opening, _, rest = body.partition("\n")
    fence = Fence.opened_by(opening)
    if fence is None or closing.strip() != fence.marker:
        return None
    return kept, rest


def continuation(previous: str, current: str) -> tuple[int, str]:
    """How many characters to take back from the end of the text so far, and what
    ``current`` adds after the chunk before it: under the same heading, its body without
    the words the two share (the chunker's overlap), after a blank line when they share
    none, and a code block the chunker cut at the seam made whole again; under another
    heading, all of it after a blank line."""
    previous_heading, previous_body = heading_and_body(previous)
    heading, body = heading_and_body(current)
    if heading != previous_heading:
        return 0, BLANK_LINE + current
    taken_back, separator = 0, BLANK_LINE
    seam = reopened_fence(previous_body, body)
    if seam is not None:
        taken_back, separator = len(previous_body) - len(seam[0]), "\n"
        previous_body, body = seam
    count = shared_words(previous_body, body)
    if not count:
        return taken_back, separator + body
    last_shared = next(islice(WORD.finditer(body), count - 1, None))
    return taken_back, body[last_shared.end() :]


def merged_text(texts: Sequence[str]) -> str:
    """Consecutive chunks of one document as one text, each overlap shown once."""
    merged = texts[0]
    for previous, current in pairwise(texts):
        taken_back, added = continuation(previous, current)
        merged = merged[: len(merged) - taken_back] + added
    return merged


def by_document(matches: Iterable[RetrievalMatch]) -> dict[str, list[tuple[int, RetrievalMatch]]]:
    """The matches whose id names a position, with it, by document, in the order given."""
    located: dict[str, list[tuple[int, RetrievalMatch]]] = {}
    for match in matches:
        position = position_of(match.chunk_id)
        if position is not None:
            located.setdefault(match.document_id, []).append((position, match))
    return located


def neighbour_ids(
    matches: Sequence[RetrievalMatch], listed: Mapping[str, Iterable[str]], radius: int
) -> list[str]:
    """Of each document's ``listed`` chunk ids, those within ``radius`` positions of one of
    its matches, matches left out: the chunks ``widened`` may need."""
    matched = {match.chunk_id for match in matches}
    wanted: list[str] = []
    for document_id, located in by_document(matches).items():
        window = around((position for position, _ in located), radius)
        wanted.extend(
            sorted(
                chunk_id
                for chunk_id in listed.get(document_id, ())
                if chunk_id not in matched and position_of(chunk_id) in window
            )
        )
    return wanted


def widened(
    matches: Sequence[RetrievalMatch], neighbours: Iterable[RagChunk], radius: int
) -> list[RetrievalMatch]:
    """The matches, in order, each with its content widened to its ``spans`` of its
    document's chunks (the matches and ``neighbours``: the other chunks at hand). Only the
    content changes: id, score, scores and metadata stay the match's own. A match whose id
    names no position is left as it is."""
    texts: dict[str, dict[int, str]] = {}
    for chunk in neighbours:
        texts.setdefault(chunk.document_id, {})[chunk.position] = chunk.content
    contents: dict[str, str] = {}
    for document_id, located in by_document(matches).items():
        chunks = texts.get(document_id, {})
        order = [position for position, _ in located]
        present = {*chunks, *order}
        for (own, match), span in zip(located, spans(order, present, radius), strict=True):
            contents[match.chunk_id] = merged_text(
                [match.content if p == own else chunks[p] for p in span]
            )
    return [
        match.model_copy(update={"content": contents[match.chunk_id]})
        if match.chunk_id in contents
        else match
        for match in matches
    ]
