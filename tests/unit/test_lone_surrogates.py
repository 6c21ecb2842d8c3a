"""Text no store can hold (a lone surrogate, as a JSON ``\\ud800`` escape decodes) is refused
where a document enters, never met as a crash further in (hashing a chunk, sizing its
metadata, writing it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from retrieval.adapters.files.document_files import read_documents
from retrieval.domain.models import RagDocument

VALID = {
    "document_id": "frost",
    "title": "Frost",
    "domain": "weather_patterns",
    "content": "Ground frost scorches young shoots.",
}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("title", "Frost \ud800"),
        ("content", "Ground \udfff frost"),
        ("metadata", {"region\ud83d": "assam"}),
        ("metadata", {"region": "as\udcaasam"}),
        ("metadata", {"tags": ["frost", "\ud800"]}),
    ],
)
def test_a_lone_surrogate_is_refused_at_the_boundary(field: str, value: object) -> None:
    with pytest.raises(ValidationError) as raised:
        RagDocument.model_validate({**VALID, field: value})
    assert raised.value.errors()[0]["loc"][0] == field


def test_characters_beyond_the_basic_plane_pass() -> None:
    document = RagDocument.model_validate(
        {**VALID, "title": "Frost \U0001f375", "metadata": {"cup": "\U0001f375"}}
    )
    assert document.metadata == {"cup": "\U0001f375"}


def test_a_collection_with_a_surrogate_escape_fails_that_entry_alone(tmp_path: Path) -> None:
    entries = [{**VALID, "metadata": {"region": "as\ud800sam"}}, {**VALID, "document_id": "rust"}]
    (tmp_path / "notes.json").write_text(json.dumps({"documents": entries}))
    loaded = read_documents([tmp_path / "notes.json"])
    assert [document.document_id for document in loaded.documents] == ["rust"]
    (failure,) = loaded.failures
    assert failure.field == "metadata"
    assert "lone surrogate" in failure.reason
