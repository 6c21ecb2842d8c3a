"""Ctrl-C during ``retrieval ingest``: a real process, sent SIGINT after its first writes."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

CLI = Path(sys.executable).with_name("retrieval")
NAMESPACE = "interrupted"
DOCUMENTS = 12
GROUPS_BEFORE_CTRL_C = 2
TIMEOUT_S = 180
WRITTEN = re.compile(r"interrupted after (\d+) documents, \d+ chunks: (\d+) created")
WITHERING = "Fresh leaf is withered until it loses about a third of its moisture. "
INGEST = ("ingest", "notes", "-n", NAMESPACE, "--domain", "plant_diseases")


def environment(data: Path, mongo_uri: str) -> dict[str, str]:
    return os.environ | {
        "RETRIEVAL_DATA_DIR": str(data),
        "RETRIEVAL_MONGODB_URI": mongo_uri,
        "RETRIEVAL_LOG_FORMAT": "json",
        "RETRIEVAL_INGEST_DOCUMENTS_PER_WRITE": "2",
        "COLUMNS": "200",
    }


def write_documents(folder: Path) -> None:
    """One chunk each, tagged so that no other run's vectors are in the embedding cache."""
    folder.mkdir()
    tag = uuid.uuid4().hex[:8]
    for n in range(DOCUMENTS):
        body = f"Field note {tag} number {n}. " + WITHERING * 8
        (folder / f"note-{n:02}.md").write_text(f"# Note {n}\n\n{body}\n")


def as_from_a_terminal() -> None:
    """SIGINT back to its default in the child: a test run started in the background of a
    shell (``make test &``) ignores it, and the command would inherit that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def ctrl_c_after_some_groups(root: Path, mongo_uri: str) -> subprocess.CompletedProcess[str]:
    """Runs ``retrieval ingest`` and sends it SIGINT once it has written some groups."""
    with subprocess.Popen(
        [str(CLI), "-v", *INGEST],
        cwd=root,
        env=environment(root / "data", mongo_uri),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=as_from_a_terminal,
    ) as process:
        assert process.stderr is not None
        groups = 0
        logged: list[str] = []
        for line in process.stderr:
            logged.append(line)
            groups += '"event": "ingest.group"' in line
            if groups == GROUPS_BEFORE_CTRL_C:
                process.send_signal(signal.SIGINT)
                break
        else:
            pytest.fail("ingest ended before it was interrupted:\n" + "".join(logged))
        stdout, stderr = process.communicate(timeout=TIMEOUT_S)
        return subprocess.CompletedProcess(
            process.args, process.returncode, stdout, "".join(logged) + stderr
        )


def run(root: Path, mongo_uri: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CLI), *args],
        cwd=root,
        env=environment(root / "data", mongo_uri),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )


def test_ctrl_c_tells_what_was_written_and_how_the_rest_is_finished(
    tmp_path: Path, mongo_uri: str
) -> None:
    write_documents(tmp_path / "notes")

    stopped = ctrl_c_after_some_groups(tmp_path, mongo_uri)

    assert stopped.returncode == 130, stopped.stdout + stopped.stderr
    assert "Traceback" not in stopped.stdout + stopped.stderr
    found = WRITTEN.search(stopped.stdout)
    assert found, stopped.stdout
    written = int(found.group(1))
    assert found.group(2) == found.group(1)
    assert GROUPS_BEFORE_CTRL_C * 2 <= written < DOCUMENTS
    assert "completed or rolled back by the next run of the same command" in stopped.stdout
    assert f"retrieval reconcile --namespace {NAMESPACE}" in stopped.stdout

    again = run(tmp_path, mongo_uri, *INGEST)
    assert again.returncode == 0, again.stdout + again.stderr
    summary = re.search(r"(\d+) created, (\d+) unchanged", again.stdout)
    assert summary, again.stdout
    created, unchanged = (int(n) for n in summary.groups())
    assert unchanged >= written
    assert created + unchanged == DOCUMENTS

    checked = run(tmp_path, mongo_uri, "reconcile", "-n", NAMESPACE, "--dry-run")
    assert checked.returncode == 0, checked.stdout + checked.stderr
