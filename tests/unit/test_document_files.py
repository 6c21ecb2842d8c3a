from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from retrieval.adapters.files.document_files import (
    LoadedDocuments,
    load_documents,
    read_documents,
)
from retrieval.demo import KNOWLEDGE_DIR
from retrieval.errors import InvalidRequestError
from retrieval_testkit.sample_files import FRONT_MATTER, PAGE, docx, pdf

PLAIN = """Some words before the heading.

# Frost on the plucking table

Ground frost scorches young shoots on clear, still nights.
"""


def read(*paths: Path, domain: str | None = "plant_diseases", title: str | None = None):
    return read_documents(list(paths), domain=domain, title=title)


def only(loaded: LoadedDocuments):
    assert loaded.failures == (), loaded.failures
    (document,) = loaded.documents
    return document


def reasons(loaded: LoadedDocuments) -> dict[str, str]:
    return {Path(failure.source).name: failure.reason for failure in loaded.failures}


def test_front_matter_gives_identity_and_metadata(tmp_path: Path) -> None:
    (tmp_path / "grey.md").write_text(FRONT_MATTER)
    document = only(read(tmp_path / "grey.md", domain="tea_cultivation", title="Other"))
    assert document.document_id == "grey-blight"
    assert document.title == "Grey blight"
    assert document.domain == "plant_diseases"
    assert document.metadata == {"region": "assam"}
    assert document.content.startswith("# Grey blight of tea")


def test_plain_markdown_takes_id_from_path_and_title_from_first_heading(tmp_path: Path) -> None:
    (tmp_path / "weather").mkdir()
    (tmp_path / "weather" / "Frost notes.md").write_text(PLAIN)
    document = only(read(tmp_path))
    assert re.fullmatch(r"weather--Frost-notes-[0-9a-f]{8}", document.document_id)
    assert document.title == "Frost on the plucking table"
    assert document.domain == "plant_diseases"
    assert document.content == PLAIN.strip()
    assert document.metadata == {}


def test_a_file_given_directly_is_named_by_its_file_name(tmp_path: Path) -> None:
    (tmp_path / "weather").mkdir()
    (tmp_path / "weather" / "frost.txt").write_text("No heading here, just text.")
    document = only(read(tmp_path / "weather" / "frost.txt"))
    assert document.document_id == "frost"
    assert document.title == "frost"


def test_a_given_title_beats_the_heading_but_not_front_matter(tmp_path: Path) -> None:
    (tmp_path / "frost.md").write_text(PLAIN)
    assert only(read(tmp_path / "frost.md", title="Frost guide")).title == "Frost guide"
    (tmp_path / "frost.md").write_text(FRONT_MATTER)
    assert only(read(tmp_path / "frost.md", title="Frost guide")).title == "Grey blight"


def test_one_title_for_several_files_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(PLAIN)
    (tmp_path / "b.md").write_text(PLAIN)
    with pytest.raises(InvalidRequestError) as raised:
        read(tmp_path, title="Everything")
    assert raised.value.field == "title"


def test_a_document_without_a_domain_fails_alone(tmp_path: Path) -> None:
    (tmp_path / "plain.md").write_text(PLAIN)
    (tmp_path / "grey.md").write_text(FRONT_MATTER)
    loaded = read(tmp_path, domain=None)
    assert [d.document_id for d in loaded.documents] == ["grey-blight"]
    (failure,) = loaded.failures
    assert failure.field == "domain"
    assert "--domain" in failure.reason


def test_html_keeps_headings_and_drops_scripts_and_navigation(tmp_path: Path) -> None:
    (tmp_path / "rust.html").write_bytes(PAGE)
    document = only(read(tmp_path))
    assert document.document_id == "rust"
    assert document.title == "Red rust | Tea notes"
    assert document.content.startswith("# Red rust\n\nAn algal disease of **stressed** bushes.")
    assert "## Control" in document.content
    assert "* Copper sprays" in document.content
    for noise in ("tracking", "color", "Home"):
        assert noise not in document.content


def test_docx_headings_become_markdown_headings(tmp_path: Path) -> None:
    (tmp_path / "pruning.docx").write_bytes(
        docx(
            [
                ("Heading1", "Pruning cycles"),
                (None, "Bushes are pruned every four years."),
                ("Heading2", "Skiffing"),
                (None, "A light skiff levels the plucking table."),
            ]
        )
    )
    document = only(read(tmp_path))
    assert document.title == "Pruning cycles"
    assert document.content == (
        "# Pruning cycles\n\nBushes are pruned every four years.\n\n"
        "## Skiffing\n\nA light skiff levels the plucking table."
    )


def test_pdf_text_is_extracted(tmp_path: Path) -> None:
    (tmp_path / "frost.pdf").write_bytes(pdf("Frost (ground) damage", "Cover young bushes."))
    document = only(read(tmp_path, title="Frost report"))
    assert document.title == "Frost report"
    assert document.content == "<!-- page 1 -->\n\nFrost (ground) damage\nCover young bushes."
    assert document.source.file_type == "pdf"
    assert document.source.uri == str(tmp_path / "frost.pdf")


def test_bad_files_fail_one_by_one_and_the_rest_is_read(tmp_path: Path) -> None:
    (tmp_path / "good.md").write_text(PLAIN)
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 this is not a PDF")
    (tmp_path / "scanned.pdf").write_bytes(pdf())
    (tmp_path / "broken.docx").write_bytes(b"not a zip archive")
    (tmp_path / "latin1.txt").write_bytes("Thé récolté".encode("latin-1"))
    (tmp_path / "empty.md").write_text("")
    (tmp_path / "open.md").write_text("---\ntitle: never closed\n")
    (tmp_path / "loose.md").write_text("---\njust words\n---\nbody")
    loaded = read(tmp_path)
    assert [d.document_id for d in loaded.documents] == ["good"]
    assert loaded.files == 8
    found = reasons(loaded)
    assert found.keys() == {
        "broken.pdf", "scanned.pdf", "broken.docx", "latin1.txt", "empty.md", "open.md",
        "loose.md",
    }  # fmt: skip
    assert found["broken.pdf"].startswith("not a readable PDF file")
    assert "no extractable text" in found["scanned.pdf"]
    assert found["broken.docx"].startswith("not a readable Word (DOCX) file")
    assert found["latin1.txt"].startswith("not UTF-8 text")
    assert found["empty.md"] == "empty file"
    assert found["open.md"] == "front matter never closed"
    assert found["loose.md"].startswith("bad front-matter line")


def test_a_converter_not_installed_is_named_for_that_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pypdf", None)
    (tmp_path / "frost.pdf").write_bytes(pdf("Frost"))
    (tmp_path / "frost.md").write_text(PLAIN)
    loaded = read(tmp_path)
    assert [d.document_id for d in loaded.documents] == ["frost"]
    (failure,) = loaded.failures
    assert failure.reason.startswith("reading PDF needs pypdf")
    assert "retrieval-service[documents]" in failure.reason


def test_unsupported_files_fail_when_named_and_are_skipped_in_folders(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "plain.md").write_text(PLAIN)
    (tmp_path / "docs" / "photo.png").write_bytes(b"\x89PNG")
    (tmp_path / "docs" / ".hidden").mkdir()
    (tmp_path / "docs" / ".hidden" / "draft.md").write_text(PLAIN)
    (tmp_path / "sheet.xlsx").write_bytes(b"PK")
    loaded = read(tmp_path / "docs", tmp_path / "sheet.xlsx", tmp_path / "missing.md")
    assert [d.document_id for d in loaded.documents] == ["plain"]
    assert loaded.skipped == (str(tmp_path / "docs" / "photo.png"),)
    found = reasons(loaded)
    assert found["sheet.xlsx"].startswith("unsupported file type '.xlsx'")
    assert found["missing.md"] == "no such file or directory"


def test_a_document_id_read_twice_fails_the_second_time(tmp_path: Path) -> None:
    (tmp_path / "frost.md").write_text(PLAIN)
    (tmp_path / "frost.txt").write_text(PLAIN)
    loaded = read(tmp_path)
    assert [d.document_id for d in loaded.documents] == ["frost"]
    (failure,) = loaded.failures
    assert failure.source == str(tmp_path / "frost.txt")
    assert failure.field == "document_id"
    assert str(tmp_path / "frost.md") in failure.reason


def test_json_collection_keeps_its_valid_documents(tmp_path: Path) -> None:
    payload = {
        "documents": [
            {"document_id": "a", "title": "A", "content": "text"},
            {"document_id": "b", "title": "B", "domain": "tea_cultivation", "content": "text"},
            {"document_id": "c d", "title": "C", "content": "text"},
            {"document_id": "e", "title": "E", "content": "x", "metadata": {"n": None}},
        ]
    }
    (tmp_path / "set.json").write_text(json.dumps(payload))
    loaded = read(tmp_path)
    assert [(d.document_id, d.domain) for d in loaded.documents] == [
        ("a", "plant_diseases"),
        ("b", "tea_cultivation"),
    ]
    assert [(f.source, f.field) for f in loaded.failures] == [
        (f"{tmp_path / 'set.json'}[2]", "document_id"),
        (f"{tmp_path / 'set.json'}[3]", "metadata"),
    ]


def test_a_given_title_is_never_spread_over_a_collection(tmp_path: Path) -> None:
    payload = {"documents": [{"document_id": n, "content": "text"} for n in ("a", "b")]}
    (tmp_path / "set.json").write_text(json.dumps(payload))
    loaded = read_documents([tmp_path / "set.json"], domain="tea_cultivation", title="One title")
    assert loaded.documents == ()
    assert [f.field for f in loaded.failures] == ["title", "title"]


@pytest.mark.parametrize("text", ["{", '{"docs": []}', "[]"])
def test_a_json_file_that_is_no_collection_fails(tmp_path: Path, text: str) -> None:
    (tmp_path / "bad.json").write_text(text)
    (failure,) = read(tmp_path).failures
    assert failure.field == "documents"


def test_progress_is_reported_per_file(tmp_path: Path) -> None:
    for name in ("a.md", "b.md", "c.md"):
        (tmp_path / name).write_text(PLAIN)
    calls: list[tuple[int, int]] = []
    read_documents([tmp_path], domain="plant_diseases", on_file=lambda *c: calls.append(c))
    assert calls == [(1, 3), (2, 3), (3, 3)]


def test_strict_loading_reads_the_bundled_knowledge_base() -> None:
    documents = load_documents([KNOWLEDGE_DIR])
    assert len(documents) == len(list(KNOWLEDGE_DIR.glob("*.md")))
    assert all(document.content.startswith("# ") for document in documents)


def test_strict_loading_raises_at_the_first_failure(tmp_path: Path) -> None:
    (tmp_path / "plain.md").write_text(PLAIN)
    with pytest.raises(InvalidRequestError, match="--domain") as raised:
        load_documents([tmp_path])
    assert raised.value.field == "domain"
    with pytest.raises(InvalidRequestError, match="no such file"):
        load_documents([tmp_path / "missing.md"])
