"""How a validation case's answer is graded.

A case passes when every check it asks for passes:

- ``expected_document_ids``: one of them is among the ``top_k`` matches. When the dense
  search answered (dense and hybrid mode), every match carries its cosine similarity
  (``scores['dense']``); an expected document whose matches carry none was found by keyword
  search alone because its chunks have no vectors, and the check fails.
- ``expected_keywords``: at least half of them appear, case-insensitively, in the texts of
  the top ``KEYWORD_MATCHES`` matches.
- ``min_score``: the top match's cosine similarity reaches it. Not its ``score``: a fused or
  BM25 score has no fixed scale and is comparable only within one result.

Every case also needs the retrieval to succeed: no error, and no search degraded.
"""

from __future__ import annotations

from collections.abc import Sequence

from retrieval.domain.models import DENSE, RetrievalMatch
from retrieval.domain.validation import ValidationCase

KEYWORD_MATCHES = 3
"""Expected keywords are looked for in the texts of this many best matches."""


def ranked_documents(matches: Sequence[RetrievalMatch]) -> list[str]:
    """Document ids of the matches, best first, each once."""
    return list(dict.fromkeys(match.document_id for match in matches))


def top_cosine(matches: Sequence[RetrievalMatch]) -> float | None:
    """The top match's cosine similarity to the query, None when there is none."""
    return matches[0].scores.get(DENSE) if matches else None


def missing_documents(
    expected: Sequence[str],
    matches: Sequence[RetrievalMatch],
    top_k: int,
    cosines_expected: bool,
) -> str | None:
    """Why no expected document counts as found, or None; ``cosines_expected`` when the
    dense search answered, so that a match without a cosine similarity has no vector."""
    found = ranked_documents(matches[:top_k])
    hits = [document for document in expected if document in found]
    if not hits:
        noun = "document" if len(expected) == 1 else "documents"
        return (
            f"expected {noun} {', '.join(expected)} not in top {top_k} "
            f"(found {', '.join(found) or 'nothing'})"
        )
    with_cosine = {m.document_id for m in matches[:top_k] if DENSE in m.scores}
    if cosines_expected and not with_cosine.intersection(hits):
        return (
            f"expected document {hits[0]} found by keyword search only: its chunks have no "
            "vectors (no cosine similarity)"
        )
    return None


def missing_keywords(keywords: Sequence[str], matches: Sequence[RetrievalMatch]) -> str | None:
    """Why too few keywords appear in the best matches' texts, or None."""
    text = "\n".join(match.content for match in matches[:KEYWORD_MATCHES]).casefold()
    found = [keyword for keyword in keywords if keyword.casefold() in text]
    if 2 * len(found) >= len(keywords):
        return None
    missing = [keyword for keyword in keywords if keyword not in found]
    return (
        f"{len(found)} of {len(keywords)} keywords in the top {KEYWORD_MATCHES}; "
        f"missing: {', '.join(missing)}"
    )


def low_score(min_score: float | None, matches: Sequence[RetrievalMatch]) -> str | None:
    """Why the top match's cosine similarity falls short of ``min_score``, or None."""
    if min_score is None:
        return None
    if not matches:
        return f"nothing returned (min_score {min_score})"
    top = top_cosine(matches)
    if top is None:
        return f"the top match has no cosine similarity to compare with min_score {min_score}"
    if top < min_score:
        return f"top score {top:.4f} < {min_score}"
    return None


def grade(
    case: ValidationCase,
    matches: Sequence[RetrievalMatch],
    top_k: int,
    *,
    degraded: Sequence[str],
    cosines_expected: bool,
) -> tuple[str, ...]:
    """Why the answer fails the case; empty when it passes. ``degraded`` names the searches
    that failed; ``cosines_expected`` when the dense search answered."""
    reasons = [
        f"degraded: {', '.join(degraded)} failed and the rest answered" if degraded else None,
        missing_documents(case.expected_document_ids, matches, top_k, cosines_expected)
        if case.expected_document_ids
        else None,
        missing_keywords(case.expected_keywords, matches),
        low_score(case.min_score, matches),
    ]
    return tuple(reason for reason in reasons if reason is not None)
