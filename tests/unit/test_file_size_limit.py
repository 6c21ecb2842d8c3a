"""Files over ``RETRIEVAL_INGEST_MAX_FILE_BYTES`` fail, unread, like other unreadable files."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from retrieval.adapters.files.document_files import MAX_FILE_BYTES, FileFailure, read_documents
from retrieval.cli.app import app
from retrieval.settings import Settings

NOTE = "---\ndomain: plant_diseases\n---\n# Frost\n\nGround frost scorches young shoots.\n"


def test_a_file_over_the_limit_fails_naming_its_size_and_the_setting(tmp_path: Path) -> None:
    (tmp_path / "small.md").write_text(NOTE)
    big = tmp_path / "big.md"
    big.write_bytes(b"\xff" * 1_500)  # not UTF-8: reading it would fail for that instead

    loaded = read_documents([tmp_path], max_file_bytes=1_000)

    assert [document.document_id for document in loaded.documents] == ["small"]
    assert loaded.failures == (
        FileFailure(
            source=str(big),
            reason="1,500 bytes, over the limit of 1,000 (RETRIEVAL_INGEST_MAX_FILE_BYTES); "
            "split the file or raise the limit",
            field="content",
        ),
    )
    assert loaded.files == 2


def test_a_pdf_over_the_limit_is_never_converted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def converted(*_: object) -> None:
        raise AssertionError("a file over the limit was read")

    monkeypatch.setattr("retrieval.adapters.files.document_files.convert", converted)
    (tmp_path / "scan.pdf").write_bytes(b"%PDF-1.4" + b"\0" * 2_000)

    loaded = read_documents([tmp_path], domain="plant_diseases", max_file_bytes=2_000)

    assert "2,008 bytes, over the limit of 2,000" in loaded.failures[0].reason


def test_a_file_at_the_limit_is_read(tmp_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_text(NOTE)

    loaded = read_documents([note], max_file_bytes=note.stat().st_size)

    assert loaded.failures == ()
    assert len(loaded.documents) == 1


def test_the_limit_is_ten_megabytes_unless_set() -> None:
    assert MAX_FILE_BYTES == Settings().ingest_max_file_bytes == 10_000_000


@pytest.mark.usefixtures("logging_kept")
def test_ingest_reads_under_the_limit_the_setting_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RETRIEVAL_INGEST_MAX_FILE_BYTES", "50")
    Path("note.md").write_text(NOTE)

    result = CliRunner().invoke(app, ["ingest", "note.md"])

    assert result.exit_code == 1
    assert f"{len(NOTE.encode()):,} bytes, over the limit of 50" in result.output
    assert "RETRIEVAL_INGEST_MAX_FILE_BYTES" in result.output
    assert "1 file, 0 documents, 0 chunks" in result.output
