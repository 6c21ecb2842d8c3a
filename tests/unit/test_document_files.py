from __future__ import annotations

import json
from pathlib import Path

import pytest

from retrieval.adapters.document_files import load_documents, parse_collection, parse_markdown
from retrieval.errors import InvalidRequestError

MARKDOWN = """---
document_id: grey-blight
title: Grey blight
domain: plant_diseases
region: assam
---
# Grey blight

Pestalotiopsis causes grey lesions on mature leaves.
"""


def test_front_matter_gives_identity_and_metadata() -> None:
    document = parse_markdown(MARKDOWN, "grey.md")
    assert document.document_id == "grey-blight"
    assert document.domain == "plant_diseases"
    assert document.metadata == {"region": "assam"}
    assert document.content.startswith("# Grey blight")


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("# No front matter", "front_matter"),
        ("---\ntitle: x\n", "front_matter"),
        ("---\njust words\n---\nbody", "front_matter"),
        ("---\ndocument_id: a b\ntitle: t\ndomain: plant_diseases\n---\nbody", "document_id"),
        ("---\ndocument_id: a\ntitle: t\ndomain: plant_diseases\n---\n", "content"),
    ],
)
def test_bad_markdown_is_a_typed_error(text: str, field: str) -> None:
    with pytest.raises(InvalidRequestError) as raised:
        parse_markdown(text, "bad.md")
    assert raised.value.field == field


def test_json_collection() -> None:
    payload = {
        "documents": [
            {"document_id": "a", "title": "A", "domain": "tea_cultivation", "content": "text"}
        ]
    }
    assert parse_collection(json.dumps(payload), "a.json")[0].document_id == "a"


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("{", "documents"),
        ('{"docs": []}', "documents"),
        ('{"documents": [{"document_id": "a"}]}', "title"),
        (
            '{"documents": [{"document_id": "a", "title": "A", "domain": "tea_cultivation",'
            ' "content": "x", "metadata": {"n": null}}]}',
            "metadata",
        ),
    ],
)
def test_bad_json_is_a_typed_error(text: str, field: str) -> None:
    with pytest.raises(InvalidRequestError) as raised:
        parse_collection(text, "bad.json")
    assert raised.value.field == field


def test_folders_are_read_in_path_order(tmp_path: Path) -> None:
    (tmp_path / "b.md").write_text(MARKDOWN.replace("grey-blight", "b"))
    (tmp_path / "a.md").write_text(MARKDOWN.replace("grey-blight", "a"))
    (tmp_path / "notes.txt").write_text("ignored")
    assert [d.document_id for d in load_documents([tmp_path])] == ["a", "b"]


def test_missing_path_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidRequestError, match="no such file"):
        load_documents([tmp_path / "missing.md"])
