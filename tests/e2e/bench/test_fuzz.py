"""``retrieval bench fuzz`` in a quick profile: every target, 50 cases each, no failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

CLI = Path(sys.executable).with_name("retrieval")
TARGETS = {"retrieve", "filters", "documents", "files", "grpc", "settings"}
CASES = 50


def test_every_public_input_takes_its_cases_without_a_failure(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    done = subprocess.run(
        [CLI, "bench", "fuzz", "--cases", str(CASES), "--reports", str(reports)],
        capture_output=True,
        text=True,
        timeout=280,
        cwd=tmp_path,
        env=os.environ | {"COLUMNS": "200"},
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((reports / "fuzz.json").read_text())
    assert set(report["targets"]) == TARGETS
    for name, figures in report["targets"].items():
        assert figures["failures"] == 0, (name, figures["first_failure"])
        assert figures["first_failure"] is None
        assert figures["cases"] == CASES, name
        assert 0 <= figures["refused"] < CASES, name
    assert report["cases_per_target"] == CASES
