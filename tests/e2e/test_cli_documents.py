"""``retrieval ingest`` on folders of real documents and ``retrieval query --json``, run as
separate processes on one data directory and one MongoDB server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path, PurePath

import pytest

from retrieval.domain.document_ids import slug_from_path
from retrieval.domain.models import RetrievalResult

CLI = Path(sys.executable).with_name("retrieval")

FROST = """# Frost protection

Ground frost scorches the plucking table of tea bushes on clear, still winter nights.
Growers cover young bushes with grass thatch and keep shade trees to hold warmth.
"""

RUST = """<!doctype html><html><head><title>Red rust</title></head><body>
<nav><a href="/">Home</a></nav>
<main><h1>Red rust</h1>
<p>Red rust is an algal disease (Cephaleuros) of stressed tea bushes. It shows as orange,
velvety patches on stems and the undersides of leaves during warm, wet weather.</p>
<h2>Control</h2><p>Copper sprays and better drainage and nutrition of the bushes.</p></main>
</body></html>"""

WITHERING = """---
domain: quality_standards
---
# Withering

Fresh leaf is withered for 14 to 18 hours until it loses about a third of its moisture.
"""


FROST_ID = slug_from_path(PurePath("field/frost protection.md"))
"""A name with a space ends in a hash of its path (``retrieval.domain.document_ids``)."""


def run(data: Path, mongo_uri: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = os.environ | {
        "RETRIEVAL_DATA_DIR": str(data),
        "RETRIEVAL_MONGODB_URI": mongo_uri,
        "RETRIEVAL_LOG_FORMAT": "json",
        "COLUMNS": "200",
    }
    return subprocess.run(
        [str(CLI), *args], cwd=data.parent, env=env, capture_output=True, text=True, timeout=180
    )


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli-documents")
    docs = root / "docs"
    (docs / "field").mkdir(parents=True)
    (docs / "field" / "frost protection.md").write_text(FROST)
    (docs / "red-rust.html").write_text(RUST)
    return root


def test_a_folder_of_html_and_plain_markdown_is_ingested_and_answers(
    workspace: Path, mongo_uri: str
) -> None:
    data = workspace / "data"
    ingested = run(data, mongo_uri, "ingest", "docs", "-n", "docs", "--domain", "plant_diseases")
    assert ingested.returncode == 0, ingested.stdout + ingested.stderr
    assert "2 files, 2 documents" in ingested.stdout
    assert "2 created" in ingested.stdout

    for question, document_id, title in [
        ("How do I protect bushes from frost?", FROST_ID, "Frost protection"),
        ("orange patches on tea stems in wet weather", "red-rust", "Red rust"),
    ]:
        answered = run(data, mongo_uri, "query", question, "-n", "docs", "-k", "2", "--json")
        assert answered.returncode == 0, answered.stderr
        result = RetrievalResult.model_validate_json(answered.stdout)
        assert result.query == question
        assert result.namespace == "docs"
        assert len(result.matches) == 2
        top = result.matches[0]
        assert (top.document_id, top.title, top.domain) == (document_id, title, "plant_diseases")
        assert top.score > result.matches[1].score


def test_bad_files_are_reported_one_by_one_and_fail_the_run(
    workspace: Path, mongo_uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RETRIEVAL_ALLOWED_DOMAINS", '["quality_standards"]')
    mixed = workspace / "mixed"
    mixed.mkdir()
    (mixed / "withering.md").write_text(WITHERING)
    (mixed / "no-domain.md").write_text(FROST)
    (mixed / "coffee.md").write_text("---\ndomain: coffee\n---\n# Coffee\n\nArabica.\n")
    (mixed / "broken.pdf").write_bytes(b"%PDF-1.4 truncated")
    (mixed / "latin1.txt").write_bytes("Thé récolté".encode("latin-1"))
    (mixed / "photo.png").write_bytes(b"\x89PNG")

    result = run(workspace / "data", mongo_uri, "ingest", "mixed", "-n", "mixed")
    assert result.returncode == 1
    out = result.stdout
    assert "Traceback" not in out + result.stderr
    assert "5 files, 1 document, 1 chunk: 1 created" in out
    assert "no-domain.md: no domain" in out
    assert "pass --domain" in out
    assert "document 'coffee': domain coffee is not in RETRIEVAL_ALLOWED_DOMAINS" in out
    assert "broken.pdf: not a readable PDF file" in out
    assert "latin1.txt: not UTF-8 text" in out
    assert "skipped mixed/photo.png" in out


def test_query_json_errors_go_to_stderr(workspace: Path, mongo_uri: str) -> None:
    result = run(workspace / "data", mongo_uri, "query", "tea", "-n", "never-written", "--json")
    assert result.returncode == 1
    assert result.stdout == ""
    assert "does not exist" in result.stderr


def test_an_empty_namespace_is_refused_in_one_line(workspace: Path, mongo_uri: str) -> None:
    result = run(
        workspace / "data", mongo_uri, "ingest", "docs", "--namespace", "", "-d", "general"
    )
    assert result.returncode != 0
    assert "Traceback" not in result.stdout + result.stderr
    [line] = result.stderr.strip().splitlines()
    assert "namespace" in line
