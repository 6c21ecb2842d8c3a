"""The id a file's path gives its document: readable where it can be, never shared by two
paths that differ."""

from __future__ import annotations

import re
import unicodedata
from pathlib import PurePath

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval.domain.document_ids import path_id, slug_from_path
from retrieval.domain.models import SLUG_PATTERN
from retrieval.domain.provenance import Source


@pytest.mark.parametrize(
    ("relative", "slug"),
    [
        ("frost.md", "frost"),
        ("a/b/c.v2.html", "a--b--c.v2"),
        ("guides/frost-risk.md", "guides--frost-risk"),
    ],
)
def test_paths_it_can_spell_are_their_ids(relative: str, slug: str) -> None:
    assert slug_from_path(PurePath(relative)) == slug


@pytest.mark.parametrize(
    ("relative", "readable"),
    [
        ("guides/Frost risk.md", "guides--Frost-risk"),
        ("Thé vert/Récolte (2024).pdf", "The-vert--Recolte-2024"),
        ("茶/(draft) notes.md", "draft-notes"),
        ("_drafts/.x.md", "drafts--.x"),
        ("_-a.md", "a"),
        ("a--b.md", "a--b"),
        ("Ünïcödé файл 日本.md", "Unicode"),
    ],
)
def test_paths_it_cannot_spell_end_in_a_hash(relative: str, readable: str) -> None:
    assert re.fullmatch(rf"{re.escape(readable)}-[0-9a-f]{{8}}", slug_from_path(PurePath(relative)))


def test_names_that_differ_by_an_accent_or_a_folder_do_not_collide() -> None:
    assert slug_from_path(PurePath("uni/resume.md")) == "uni--resume"
    assert slug_from_path(PurePath("uni/résumé.md")) != "uni--resume"
    assert slug_from_path(PurePath("a--b.md")) != slug_from_path(PurePath("a/b.md"))


def test_both_unicode_forms_of_a_name_give_one_id() -> None:
    name = "résumé.md"
    composed, decomposed = (unicodedata.normalize(form, name) for form in ("NFC", "NFD"))
    assert slug_from_path(PurePath(composed)) == slug_from_path(PurePath(decomposed))


def test_names_with_nothing_usable_or_too_long_still_get_distinct_slugs() -> None:
    assert re.fullmatch(r"doc-[0-9a-f]{8}", slug_from_path(PurePath("茶.md")))
    assert slug_from_path(PurePath("茶.md")) != slug_from_path(PurePath("紅茶.md"))
    long_a, long_b = (slug_from_path(PurePath(f"{'x' * 200}{end}.md")) for end in "ab")
    assert len(long_a) == len(long_b) == 128
    assert long_a != long_b


PARTS = st.lists(
    st.text(min_size=1, max_size=80).filter(
        lambda p: p not in {".", ".."} and "/" not in p and "\x00" not in p
    ),
    min_size=1,
    max_size=4,
)


@given(PARTS)
def test_every_path_gives_a_valid_ascii_slug(parts: list[str]) -> None:
    slug = slug_from_path(PurePath(*parts))
    assert re.fullmatch(SLUG_PATTERN, slug)
    assert slug.isascii()


@given(PARTS, PARTS)
def test_paths_that_differ_give_ids_that_differ(one: list[str], other: list[str]) -> None:
    first, second = (PurePath(*parts) for parts in (one, other))
    same = unicodedata.normalize("NFC", first.with_suffix("").as_posix()) == unicodedata.normalize(
        "NFC", second.with_suffix("").as_posix()
    )
    assert (slug_from_path(first) == slug_from_path(second)) == same


def test_a_source_gives_the_id_of_its_path_under_its_root() -> None:
    under = Source(uri="/kb/misc/Beta notes.md", root="/kb")
    given_directly = Source(uri="/kb/misc/beta.md", root="/kb/misc/beta.md")
    assert path_id(under) == slug_from_path(PurePath("misc/Beta notes.md"))
    assert path_id(given_directly) == "beta"
    assert path_id(Source(uri="/kb/beta.md")) is None
    assert path_id(Source(uri="/elsewhere/beta.md", root="/kb")) is None
