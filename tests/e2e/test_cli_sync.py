"""A team's knowledge base over time, through the command line: ingest a folder of HTML,
PDF, Word, markdown and text files; rename, edit, delete and add files; ``retrieval sync``;
then exactly the folder's documents are listed and searchable. Ids that clash are refused,
``delete`` removes by id and by source, and a sync that would empty the namespace stops."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from retrieval.domain.models import RetrievalResult
from retrieval_testkit.sample_files import PAGE, docx, pdf

CLI = Path(sys.executable).with_name("retrieval")
NS = "team"

FILES = {
    "guide.md": "# Pruning guide\n\n## Timing\n\nPrune tea bushes every four years in the cool "
    "season, cutting the frame back to forty centimetres above the ground.",
    "notes.txt": "Shade trees\n\nSilver oak shade trees keep the tea garden cool and add leaf "
    "litter that feeds the soil.",
    "rust.html": PAGE.decode(),
    "sub/withering.md": "# Withering\n\nFresh leaf is withered for fourteen to eighteen hours "
    "until it loses a third of its moisture.",
}
BINARY = {
    "frost.pdf": pdf("Frost protection", "Thatch young tea bushes with grass on clear nights."),
    "grading.docx": docx([("Heading1", "Leaf grading"), (None, "Orange pekoe is the whole leaf.")]),
}


def run(root: Path, mongo_uri: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = os.environ | {
        "RETRIEVAL_DATA_DIR": str(root / "data"),
        "RETRIEVAL_MONGODB_URI": mongo_uri,
        "RETRIEVAL_LOG_FORMAT": "json",
        "RETRIEVAL_MONGODB_DATABASE": f"sync_{root.name}",
        "COLUMNS": "200",
    }
    return subprocess.run(
        [str(CLI), *args], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )


def listed(root: Path, mongo_uri: str, namespace: str = NS) -> dict[str, str]:
    """``retrieval documents --json``: source by document id."""
    done = run(root, mongo_uri, "documents", "-n", namespace, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    return {d["document_id"]: d["source"] for d in json.loads(done.stdout)}


def searched(root: Path, mongo_uri: str, question: str) -> RetrievalResult:
    done = run(root, mongo_uri, "query", question, "-n", NS, "-k", "10", "--json")
    assert done.returncode == 0, done.stderr
    return RetrievalResult.model_validate_json(done.stdout)


def write_folder(kb: Path) -> None:
    for name, text in FILES.items():
        (kb / name).parent.mkdir(parents=True, exist_ok=True)
        (kb / name).write_text(text)
    for name, data in BINARY.items():
        (kb / name).write_bytes(data)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("sync")


def test_sync_leaves_exactly_the_folders_documents_searchable(root: Path, mongo_uri: str) -> None:
    kb = root / "kb"
    write_folder(kb)
    first = run(root, mongo_uri, "sync", "kb", "-n", NS, "--domain", "tea_cultivation")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "6 created" in first.stdout

    (kb / "notes.txt").rename(kb / "shade.txt")
    (kb / "guide.md").write_text(FILES["guide.md"].replace("four years", "five years"))
    (kb / "rust.html").unlink()
    (kb / "new.md").write_text("# Plucking\n\nPluck two leaves and a bud every seven days.")
    before = listed(root, mongo_uri)
    dry = run(root, mongo_uri, "sync", "kb", "-n", NS, "-d", "tea_cultivation", "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "2 created, 1 updated, 3 unchanged, 2 deleted, 0 failed" in dry.stdout
    assert listed(root, mongo_uri) == before

    synced = run(root, mongo_uri, "sync", "kb", "-n", NS, "-d", "tea_cultivation")
    assert synced.returncode == 0, synced.stdout + synced.stderr
    assert "2 created, 1 updated, 3 unchanged, 2 deleted, 0 failed" in synced.stdout
    files = {str(path.resolve()) for path in kb.rglob("*") if path.is_file()}
    assert set(listed(root, mongo_uri).values()) == files

    result = searched(root, mongo_uri, "orange velvety patches of red rust algal disease")
    assert {match.source for match in result.matches} <= files
    assert all(match.document_id not in {"rust", "notes"} for match in result.matches)
    pdf_match = next(
        m for m in searched(root, mongo_uri, "thatch frost").matches if m.file_type == "pdf"
    )
    assert pdf_match.source == str((kb / "frost.pdf").resolve())
    assert pdf_match.pages == (1,)


def test_an_id_two_folders_share_is_refused_until_replaced(root: Path, mongo_uri: str) -> None:
    for package, text in (("pkgA", "Alpha reads sensors."), ("pkgB", "Beta writes reports.")):
        (root / package).mkdir()
        (root / package / "README.md").write_text(f"# {package}\n\n{text}")
    first = run(root, mongo_uri, "ingest", "pkgA", "-n", "ux", "-d", "tea_cultivation")
    assert first.returncode == 0, first.stdout + first.stderr
    second = run(root, mongo_uri, "ingest", "pkgB", "-n", "ux", "-d", "tea_cultivation")
    assert second.returncode == 1
    assert "pkgA/README.md" in second.stdout
    assert "pkgB/README.md" in second.stdout
    assert listed(root, mongo_uri, "ux") == {"README": str((root / "pkgA/README.md").resolve())}
    replaced = run(
        root, mongo_uri, "ingest", "pkgB", "-n", "ux", "-d", "tea_cultivation", "--replace"
    )
    assert replaced.returncode == 0, replaced.stdout + replaced.stderr
    assert listed(root, mongo_uri, "ux") == {"README": str((root / "pkgB/README.md").resolve())}


def test_delete_by_source_prefix_and_by_id(root: Path, mongo_uri: str) -> None:
    kb = root / "deletions"
    write_folder(kb)
    assert (
        run(root, mongo_uri, "ingest", "deletions", "-n", "del", "-d", "tea_cultivation").returncode
        == 0
    )
    dry = run(
        root, mongo_uri, "delete", "-n", "del", "--source-prefix", "deletions/sub", "--dry-run"
    )
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "1 document would be deleted" in dry.stdout
    assert len(listed(root, mongo_uri, "del")) == 6
    gone = run(root, mongo_uri, "delete", "guide", "-n", "del", "--source-prefix", "deletions/sub")
    assert gone.returncode == 0, gone.stdout + gone.stderr
    assert set(listed(root, mongo_uri, "del")) == {"notes", "rust", "frost", "grading"}
    missing = run(root, mongo_uri, "delete", "nothing-here", "-n", "del")
    assert missing.returncode == 1
    assert "nothing-here" in missing.stdout


def test_a_sync_that_would_empty_the_namespace_stops(root: Path, mongo_uri: str) -> None:
    kb = root / "mass"
    write_folder(kb)
    assert (
        run(root, mongo_uri, "sync", "mass", "-n", "mass", "-d", "tea_cultivation").returncode == 0
    )
    for path in [p for p in kb.rglob("*") if p.is_file()][1:]:
        path.unlink()
    stopped = run(root, mongo_uri, "sync", "mass", "-n", "mass", "-d", "tea_cultivation")
    assert stopped.returncode == 1
    assert "RETRIEVAL_SYNC_MAX_DELETE_SHARE" in stopped.stderr
    assert len(listed(root, mongo_uri, "mass")) == 6


def test_a_subfolder_ingested_after_its_folder_writes_no_second_document(
    root: Path, mongo_uri: str
) -> None:
    kb = root / "nested"
    (kb / "misc").mkdir(parents=True)
    (kb / "alpha.md").write_text("# Alpha\n\nPluck two leaves and a bud.")
    (kb / "misc" / "beta.md").write_text("# Beta\n\nWither the leaf for fourteen hours.")
    for folder in ("nested", "nested/misc"):
        done = run(root, mongo_uri, "ingest", folder, "-n", "nested", "-d", "tea_cultivation")
        assert done.returncode == 0, done.stdout + done.stderr
    assert listed(root, mongo_uri, "nested") == {
        "alpha": str((kb / "alpha.md").resolve()),
        "misc--beta": str((kb / "misc" / "beta.md").resolve()),
    }
