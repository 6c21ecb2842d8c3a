"""What the command line tells: a dry run shows a refused mass delete with its reason, counts
match the lines above them, an empty outcome says why on stderr, errors go to stderr, ids stay
whole at 80 columns, and a port in use names its setting."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from retrieval_testkit.served_process import serve_environment, served_process

CLI = Path(sys.executable).with_name("retrieval")
LONG_ID = "misc--shared-mime-info-specification-of-the-freedesktop-project"
LOOPS = """---
domain: software_docs
---
# Loops

## Repetition with loops

### Disambiguating with loop labels

Name a loop with a label such as 'outer and break out of it from an inner loop.
"""


def note(name: str) -> str:
    return f"---\ndomain: software_docs\n---\n# {name}\n\nNotes about {name} and its settings.\n"


def run(
    root: Path, *args: str, columns: int = 200, **settings: str
) -> subprocess.CompletedProcess[str]:
    env = os.environ | {
        "RETRIEVAL_DATA_DIR": str(root / "data"),
        "RETRIEVAL_LOG_FORMAT": "json",
        "COLUMNS": str(columns),
        **settings,
    }
    env.pop("RETRIEVAL_MONGODB_URI", None)
    return subprocess.run(
        [str(CLI), *args], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A namespace ``kb`` holding the loops chapter and a document with a long id."""
    root = tmp_path_factory.mktemp("feedback")
    (root / "kb").mkdir()
    (root / "kb" / "loops.md").write_text(LOOPS)
    (root / "kb" / f"{LONG_ID}.md").write_text(note("MIME types"))
    ingested = run(root, "ingest", "kb", "-n", "kb")
    assert ingested.returncode == 0, ingested.stdout + ingested.stderr
    return root


def test_a_dry_run_shows_the_mass_delete_it_would_refuse_and_why(root: Path) -> None:
    folder = root / "mass"
    folder.mkdir()
    for name in ("alpha", "beta", "gamma", "delta"):
        (folder / f"{name}.md").write_text(note(name))
    assert run(root, "sync", "mass", "-n", "mass").returncode == 0
    for name in ("beta", "gamma", "delta"):
        (folder / f"{name}.md").unlink()

    dry = run(root, "sync", "mass", "-n", "mass", "--dry-run")
    assert dry.returncode == 1
    assert all(f"deleted {name}" in " ".join(dry.stdout.split()) for name in ("beta", "delta"))
    assert "1 unchanged, 3 deleted, 0 failed (dry run: nothing changed)" in dry.stdout
    assert "RETRIEVAL_SYNC_MAX_DELETE_SHARE" in dry.stderr
    assert "--allow-mass-delete" in dry.stderr

    real = run(root, "sync", "mass", "-n", "mass")
    assert real.returncode == 1
    assert "RETRIEVAL_SYNC_MAX_DELETE_SHARE" in real.stderr
    listed = run(root, "documents", "-n", "mass", "--json")
    assert listed.stdout.count('"document_id"') == 4


def test_a_file_that_failed_is_counted_as_failed(root: Path) -> None:
    (root / "counted" / "misc").mkdir(parents=True)
    (root / "counted" / "misc" / "alpha.md").write_text(note("alpha"))
    (root / "counted" / "misc" / "beta.md").write_text("# Beta\n\nNo domain here.\n")
    synced = run(root, "sync", "counted", "-n", "counted")
    assert synced.returncode == 1
    assert "beta.md: no domain" in synced.stdout
    assert synced.stdout.rstrip().endswith("1 created, 0 updated, 0 unchanged, 0 deleted, 1 failed")


@pytest.mark.parametrize(
    ("args", "code", "reason"),
    [
        (
            ("query", "loop labels", "--section", "Disambiguating with loop labels"),
            1,
            "Repetition with loops > Disambiguating with loop labels",
        ),
        (("query", "  \t "), 2, "blank"),
        (("ask", " "), 2, "blank"),
        (("delete", "--source-prefix", "/nonexistent"), 1, "nothing under /nonexistent"),
        (("documents", "--source-prefix", "/nonexistent"), 1, "nothing under /nonexistent"),
    ],
)
def test_an_empty_outcome_says_why_on_stderr(
    root: Path, args: tuple[str, ...], code: int, reason: str
) -> None:
    told = run(root, *args, "-n", "kb")
    assert told.returncode == code, told.stdout + told.stderr
    [line] = [line for line in told.stderr.splitlines() if not line.startswith("{")]
    assert reason in line


def test_a_namespace_that_does_not_exist_is_an_error_for_documents_as_for_query(
    root: Path,
) -> None:
    for command in (("documents",), ("query", "loops")):
        told = run(root, *command, "-n", "never")
        assert told.returncode == 1, told.stdout + told.stderr
        assert "'never' does not exist" in told.stderr
        assert told.stdout == ""


def test_ask_without_a_language_model_says_so_on_stderr(root: Path) -> None:
    refused = run(root, "ask", "loop labels", "-n", "kb")
    assert refused.returncode == 1
    assert refused.stdout == ""
    assert "RETRIEVAL_LLM_BASE_URL" in refused.stderr


def test_document_ids_are_whole_at_80_columns(root: Path) -> None:
    listed = run(root, "documents", "-n", "kb", columns=80)
    assert listed.returncode == 0, listed.stderr
    assert LONG_ID in listed.stdout
    assert max(len(line) for line in listed.stdout.splitlines()) <= 80


def test_serve_on_a_port_in_use_is_one_line_naming_the_setting(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        refused = run(
            tmp_path, "serve", RETRIEVAL_GRPC_HOST="127.0.0.1", RETRIEVAL_GRPC_PORT=str(port)
        )
    assert refused.returncode == 2
    [line] = refused.stderr.splitlines()
    assert "RETRIEVAL_GRPC_PORT" in line
    assert str(port) in line


async def test_a_forwarded_command_names_the_server_as_lacking_the_setting(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "loops.md").write_text(LOOPS)
    async with served_process(tmp_path, serve_environment(data)) as served:
        assert run(tmp_path, "ingest", "kb").returncode == 0
        asked = run(tmp_path, "ask", "loop labels", RETRIEVAL_LLM_MODEL="ignored-here")
    assert asked.returncode == 1
    assert "RETRIEVAL_LLM_BASE_URL" in asked.stderr
    assert f"the server at {served.address}" in asked.stderr
