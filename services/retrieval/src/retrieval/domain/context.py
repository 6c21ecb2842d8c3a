"""The numbered context a chat model answers from, and the citations it gives back.

Matches become numbered passages, best first, inside a token budget: ``[1]`` is the
best match that fits, ``[2]`` the next, with no gaps. A passage is whole or left out;
one too large for the room left is skipped and the smaller ones after it may still fit,
so one long chunk cannot starve the rest, while the numbers keep the ranking's order.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Callable, Iterable, Sequence

from pydantic import Field

from retrieval.domain.metadata import MetadataValue
from retrieval.domain.models import Frozen, RetrievalMatch
from retrieval.domain.provenance import location
from retrieval.errors import InvalidRequestError

DEFAULT_TEMPLATE = "[{number}] {title} ({domain}){where}\n{content}"
DEFAULT_DELIMITER = "\n\n---\n\n"
MISSING = "N/A"
"""What a template field renders as when the chunk has no such field."""

TEXT_PIECE = re.compile(r"[A-Za-z]+|\d{1,3}|\s+|.", re.DOTALL)
CITED_NUMBERS = r"\d{1,9}(?:\s*,\s*\d{1,9})*"
CITATION = re.compile(rf"\[({CITED_NUMBERS})\]")
SENTENCE = re.compile(rf"\S.*?(?:[.!?]+(?:\s*\[{CITED_NUMBERS}\])*(?=\s)|\n|\Z)", re.DOTALL)


class Citation(Frozen):
    """What ``[number]`` in the context and in an answer refers to."""

    number: int = Field(ge=1, description="The passage's number in the context, from 1.")
    chunk_id: str = Field(description="The chunk the passage shows.")
    document_id: str = Field(description="Document of the chunk.")
    title: str = Field(description="Title of that document.")
    domain: str = Field(description="Knowledge domain of that document.")
    source: str | None = Field(default=None, description="Path or URL of that document.")
    section: str = Field(default="", description="Heading path of the chunk below the title.")
    pages: tuple[int, ...] = Field(default=(), description="Pages of the source it spans.")


def provenance_fields(match: RetrievalMatch | Citation) -> dict[str, object]:
    """Where a passage's text comes from, in plain JSON types: its chunk id, and its document's
    id, title, source, section and pages."""
    return {
        "chunk_id": match.chunk_id,
        "document_id": match.document_id,
        "title": match.title,
        "source": match.source,
        "section": match.section,
        "pages": list(match.pages),
    }


def where(match: RetrievalMatch) -> str:
    """Where a passage comes from, as `` — source § section, p. 3``; empty if unknown."""
    parts = location(match.source, match.section, match.pages)
    return f" — {', '.join(parts)}" if parts else ""


class BuiltContext(Frozen):
    """Numbered passages ready for a prompt."""

    text: str = Field(description="The passages, joined by the delimiter.")
    citations: tuple[Citation, ...] = Field(description="One per passage, numbered 1, 2, ...")
    tokens: int = Field(ge=0, description="Tokens of ``text`` by the counter the build used.")
    dropped: tuple[str, ...] = Field(
        default=(), description="Chunk ids left out because they did not fit the budget."
    )
    truncated: bool = Field(default=False, description="Whether any chunk was left out.")


def approximate_tokens(text: str) -> int:
    """Tokens of ``text`` as an upper-bound estimate of what GPT tokenizers (cl100k, o200k)
    count for English: a run of ASCII letters counts one token per four letters (rounded
    up), a run of up to three digits one, every other character (punctuation, non-ASCII)
    one, whitespace one per run except a single space (which the next word carries).

    Common words are single tokens, so English prose comes out about 1.2-1.5 times the
    real count; rare words, numbers and symbols split like the real tokenizers split
    them. Pass the model's own tokenizer to ``build_context`` for exact budgets.
    """
    return sum(_piece_tokens(piece) for piece in TEXT_PIECE.findall(text))


def _piece_tokens(piece: str) -> int:
    if piece.isspace():
        return 0 if piece == " " else 1
    if piece.isascii() and piece.isalpha():
        return math.ceil(len(piece) / 4)
    return 1


def build_context(
    matches: Iterable[RetrievalMatch],
    *,
    budget_tokens: int,
    count_tokens: Callable[[str], int] = approximate_tokens,
    template: str = DEFAULT_TEMPLATE,
    delimiter: str = DEFAULT_DELIMITER,
) -> BuiltContext:
    """The matches, in their order, rendered by ``template`` and joined by ``delimiter``
    while the whole text counts at most ``budget_tokens``.

    ``template`` takes ``{number}``, ``{title}``, ``{document_id}``, ``{domain}``,
    ``{content}``, ``{where}`` (`` — source § section, p. 3``, or nothing when the chunk has
    no source or section) and the chunk's metadata keys (``{region}``); a field the chunk
    lacks renders ``N/A``. A chunk id seen before is ignored. Raises ``InvalidRequestError``
    for a malformed template or a budget below one.
    """
    if budget_tokens < 1:
        raise InvalidRequestError("must be at least 1", field="budget_tokens")
    _check_template(template)
    text, tokens = "", 0
    citations: list[Citation] = []
    dropped: list[str] = []
    seen: set[str] = set()
    for match in matches:
        if match.chunk_id in seen:
            continue
        seen.add(match.chunk_id)
        passage = _render(template, match, len(citations) + 1)
        candidate = f"{text}{delimiter}{passage}" if citations else passage
        candidate_tokens = count_tokens(candidate)
        if candidate_tokens > budget_tokens:
            dropped.append(match.chunk_id)
            continue
        text, tokens = candidate, candidate_tokens
        citations.append(
            Citation(
                number=len(citations) + 1,
                chunk_id=match.chunk_id,
                document_id=match.document_id,
                title=match.title,
                domain=match.domain,
                source=match.source,
                section=match.section,
                pages=match.pages,
            )
        )
    return BuiltContext(
        text=text,
        citations=tuple(citations),
        tokens=tokens,
        dropped=tuple(dropped),
        truncated=bool(dropped),
    )


class _Fields(dict[str, object]):
    def __missing__(self, key: str) -> str:
        return MISSING


def _check_template(template: str) -> None:
    """Refuse what ``str.format_map`` would fail on, and attribute or index lookups;
    every field but ``number`` is text, so one trial rendering checks every format spec."""
    try:
        names = [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]
        for name in names:
            if not name.isidentifier():
                raise ValueError(f"field {{{name}}} must be a plain name such as {{title}}")
        template.format_map(_Fields(number=1))
    except (ValueError, TypeError) as error:
        raise InvalidRequestError(str(error), field="template") from error


def _render(template: str, match: RetrievalMatch, number: int) -> str:
    fields = _Fields({key: _metadata_text(value) for key, value in match.metadata.items()})
    fields.update(
        number=number,
        title=match.title,
        document_id=match.document_id,
        domain=match.domain,
        content=match.content,
        where=where(match),
    )
    return template.format_map(fields)


def _metadata_text(value: MetadataValue) -> str:
    return ", ".join(value) if isinstance(value, list) else str(value)


def cited_numbers(answer: str) -> list[int]:
    """Every number cited as ``[n]``, ``[n, m]`` or ``[n][m]``, in order, repeats kept."""
    return [int(number) for group in CITATION.findall(answer) for number in group.split(",")]


def parse_citations(answer: str, citations: Sequence[Citation]) -> tuple[list[Citation], list[int]]:
    """The citations ``answer`` cites, in order of first appearance, and the numbers it
    cites that no citation has (invented), likewise."""
    by_number = {citation.number: citation for citation in citations}
    known: list[Citation] = []
    unknown: list[int] = []
    for number in dict.fromkeys(cited_numbers(answer)):
        if number in by_number:
            known.append(by_number[number])
        else:
            unknown.append(number)
    return known, unknown


def citation_coverage(answer: str, *, citations: Sequence[Citation] | None = None) -> float:
    """Share of the answer's sentences that cite at least one passage; 0 without sentences.

    A sentence ends at ``.``, ``!`` or ``?`` followed by whitespace (citations right after
    the mark stay with it: ``... leaves. [1]``) or at a line break, so list items count one
    each; abbreviations such as "e.g." end one too. With ``citations``, only numbers they
    have count as cited.
    """
    sentences = [sentence.group() for sentence in SENTENCE.finditer(answer)]
    if not sentences:
        return 0.0
    known = None if citations is None else {citation.number for citation in citations}
    cited = sum(
        1
        for sentence in sentences
        if any(known is None or number in known for number in cited_numbers(sentence))
    )
    return cited / len(sentences)
