"""``retrieval bench grpc`` in a quick profile: both doors compute every query, so each path's
percentiles are of computed calls, none answered from what the other path left in a cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

CLI = Path(sys.executable).with_name("retrieval")


def test_both_doors_compute_every_query_and_agree(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    done = subprocess.run(
        [CLI, "bench", "grpc", "--queries", "6", "--reports", str(reports)],
        capture_output=True,
        text=True,
        timeout=280,
        cwd=tmp_path,
        env=os.environ | {"COLUMNS": "200", "RETRIEVAL_DATA_DIR": str(tmp_path / "data")},
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    figures = json.loads((reports / "bench-grpc.json").read_text())
    assert (figures["queries"], figures["mismatches"], figures["cached_answers"]) == (6, 0, 0)
    assert min(figures["inproc_p50_ms"], figures["grpc_p50_ms"]) > 0
