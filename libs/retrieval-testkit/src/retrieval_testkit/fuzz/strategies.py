"""Hostile values the targets share: texts, identifiers, numbers, JSON and metadata."""

from __future__ import annotations

import operator
import string
from typing import Any

from hypothesis import strategies as st

from retrieval.domain.chunk_identity import RESERVED_METADATA
from retrieval.domain.metadata import MODEL_FIELD
from retrieval.domain.models import DEFAULT_DOMAINS

WORDS = (
    "tea", "blister", "blight", "frost", "pruning", "plucking", "monsoon", "copper", "leaf",
    "bush", "shade", "drought", "grading", "assam", "the", "and", "of", "how", "why",
)  # fmt: skip
EDGE_TEXTS = (
    "", " ", "\n\n", "\x00", "a\x00b", "\ud800", "\udfff tea", "\u202etea", "\ufeff", "#",
    "# ", "---", "---\nx", "```", "$", "$eq", "🍵" * 50, "ǅ", "İ", "ß" * 10, "\u0301" * 20,
    "\t\r\x0b\x0c", "nan", "inf", "-0", "1e309", "[]", "{}",
)  # fmt: skip
SLUG_START = string.ascii_letters + string.digits
FIELD_NAMES = (
    "region", "year", "tags", "organic", "score", "domain", "title", "document_id",
    "position", MODEL_FIELD, "", "$and", "$eq", "a.b", "a\x00b", "é",
)  # fmt: skip


def mostly(valid: st.SearchStrategy[Any], hostile: st.SearchStrategy[Any], odds: int = 10):
    """``valid`` ``odds`` times out of ``odds + 1``, else ``hostile``: a case with many fields
    gets past validation often enough to reach what lies behind it."""
    return st.integers(0, odds).flatmap(lambda draw: hostile if draw == 0 else valid)


def words(max_size: int = 30, min_size: int = 0) -> st.SearchStrategy[str]:
    """Sentences of words the corpora share, so that searches find something."""
    return st.lists(st.sampled_from(WORDS), min_size=min_size, max_size=max_size).map(" ".join)


def markdown(max_size: int = 400) -> st.SearchStrategy[str]:
    """Text built of markdown's moving parts: headings, fences, lists, front matter."""
    pieces = st.one_of(
        words(12),
        st.sampled_from(["#", "##", "######", "-", "*", "```", "---", ">", "|", "\n", "\n\n"]),
        st.text(max_size=20),
    )
    return st.lists(pieces, max_size=max_size // 10).map(" ".join)


def texts(max_size: int = 200) -> st.SearchStrategy[str]:
    """Any Unicode (lone surrogates included), markdown, words, and known edge cases."""
    return st.one_of(
        st.text(max_size=max_size),
        st.text(st.one_of(st.characters(), st.characters(categories=["Cs"])), max_size=max_size),
        words(),
        markdown(max_size),
        st.sampled_from(EDGE_TEXTS),
        st.sampled_from([("tea ", 2000), ("x", 40_000), ("# ", 5000)]).map(repeated),
    )


def repeated(piece_and_times: tuple[str, int]) -> str:
    piece, times = piece_and_times
    return piece * times


def long_texts(piece: st.SearchStrategy[str], most: int = 40) -> st.SearchStrategy[str]:
    """A drawn text repeated up to ``most`` times: long input at the cost of a short one."""
    return st.tuples(piece, st.integers(1, most)).map(repeated)


def valid_slugs(most: int = 40) -> st.SearchStrategy[str]:
    """Identifiers ``SLUG_PATTERN`` accepts (up to ``most`` characters); cheaper to draw than
    ``from_regex``."""
    return st.builds(
        operator.add,
        st.sampled_from(SLUG_START),
        st.text(alphabet=SLUG_START + "_.-", max_size=most - 1),
    )


def slugs() -> st.SearchStrategy[str]:
    """Identifiers: valid slugs mostly, and anything else."""
    return mostly(valid_slugs(), st.one_of(valid_slugs(200), texts(140)), odds=6)


def domains() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(DEFAULT_DOMAINS), st.text(alphabet="abcz_", max_size=12), texts(70)
    )


def numbers() -> st.SearchStrategy[int | float]:
    """Whole numbers of any size and floats, NaN and infinities included."""
    return st.one_of(
        st.integers(-3, 300),
        st.integers(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(),
        st.floats(-2, 2),
    )


def scalars() -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), st.booleans(), numbers(), texts(40))


def json_values(max_leaves: int = 12) -> st.SearchStrategy[Any]:
    """What JSON (and a little more: NaN, infinities, huge integers) can hold."""
    return st.recursive(
        scalars(),
        lambda children: st.one_of(
            st.lists(children, max_size=5), st.dictionaries(texts(20), children, max_size=5)
        ),
        max_leaves=max_leaves,
    )


def field_names() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(FIELD_NAMES), st.sampled_from(sorted(RESERVED_METADATA)), texts(30)
    )


def metadata_values() -> st.SearchStrategy[Any]:
    """Values metadata may hold (strings, numbers, booleans, lists of strings) and may not."""
    return st.one_of(
        st.text(max_size=30),
        numbers(),
        st.booleans(),
        st.lists(st.text(max_size=10), max_size=5),
        json_values(6),
    )


def metadata() -> st.SearchStrategy[Any]:
    """Objects mostly (some too large to store), and other JSON now and then."""
    return st.one_of(
        st.dictionaries(field_names(), metadata_values(), max_size=6),
        st.integers(40_000, 41_000).map(lambda size: {"blob": "m" * size}),
        json_values(4),
    )


def mutate(data: bytes, edits: list[tuple[str, float, bytes]]) -> bytes:
    """Apply each edit at a relative position: overwrite, insert, delete, cut or repeat."""
    out = bytearray(data)
    for kind, where, piece in edits:
        at = int(where * len(out))
        if kind == "overwrite":
            out[at : at + len(piece)] = piece
        elif kind == "insert":
            out[at:at] = piece
        elif kind == "delete":
            del out[at : at + len(piece) + 1]
        elif kind == "cut":
            del out[at:]
        else:
            out[at:at] = out[at : at + 64] * (len(piece) + 1)
    return bytes(out)


def edits() -> st.SearchStrategy[list[tuple[str, float, bytes]]]:
    kinds = st.sampled_from(["overwrite", "insert", "delete", "cut", "repeat"])
    return st.lists(
        st.tuples(kinds, st.floats(0, 1), st.binary(max_size=12)), min_size=1, max_size=6
    )
