"""`retrieval reconcile` finds and repairs a namespace whose vectors were lost. The commands
keep their chunk texts on the session's MongoDB wire server: what is lost is in the index."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

CLI = Path(sys.executable).with_name("retrieval")

FROST = """# Frost protection

Ground frost scorches the plucking table of tea bushes on clear, still winter nights.
Growers cover young bushes with grass thatch and keep shade trees to hold warmth.
"""


def run(root: Path, mongo_uri: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = os.environ | {
        "RETRIEVAL_DATA_DIR": str(root / "data"),
        "RETRIEVAL_MONGODB_URI": mongo_uri,
        "RETRIEVAL_MONGODB_DATABASE": f"reconcile_{root.name}",
        "RETRIEVAL_LOG_FORMAT": "json",
    }
    return subprocess.run(
        [str(CLI), *args], cwd=root, env=env, capture_output=True, text=True, timeout=180
    )


def report(result: subprocess.CompletedProcess[str]) -> dict:
    return json.loads(result.stdout[result.stdout.index("{") :])


def test_lost_vectors_are_found_then_embedded_again(tmp_path: Path, mongo_uri: str) -> None:
    (tmp_path / "frost.md").write_text(FROST)
    ingested = run(
        tmp_path, mongo_uri, "ingest", "frost.md", "-n", "farm", "--domain", "weather_patterns"
    )
    assert ingested.returncode == 0, ingested.stdout + ingested.stderr
    lost = list((tmp_path / "data" / "index").glob("farm.*"))
    assert lost
    for path in lost:
        path.unlink()

    found = run(tmp_path, mongo_uri, "reconcile", "-n", "farm", "--dry-run", "--json")
    assert found.returncode == 1
    assert report(found)["texts_without_vectors"] == 1
    assert report(found)["repaired_documents"] == 0

    repaired = run(tmp_path, mongo_uri, "reconcile", "-n", "farm", "--json")
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert report(repaired)["repaired_documents"] == 1

    clean = run(tmp_path, mongo_uri, "reconcile", "-n", "farm", "--dry-run", "--json")
    assert clean.returncode == 0
    assert report(clean)["documents_to_repair"] == 0
    answer = run(tmp_path, mongo_uri, "query", "frost on tea bushes", "-n", "farm", "--json")
    assert json.loads(answer.stdout)["matches"][0]["document_id"] == "frost"
