"""``retrieval bench load`` end to end, on a quick profile: the embedded stack in a temporary
directory, 9 readers alone, then with 1 writer, over gRPC on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CLI = Path(sys.executable).with_name("retrieval")
FIELDS = {
    "callers",
    "seconds",
    "requests",
    "errors",
    "p50_ms",
    "p95_ms",
    "p99_ms",
    "rss_start_mb",
    "rss_end_mb",
    "reads_alone_p50_ms",
    "reads_alone_p95_ms",
    "reads_with_writers_p50_ms",
    "reads_with_writers_p95_ms",
    "read_p50_ratio",
    "read_p95_ratio",
}


@pytest.mark.timeout(900)
def test_a_quick_load_run_answers_every_call_and_reports_every_figure(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            str(CLI),
            "bench",
            "load",
            "--callers",
            "10",
            "--seconds",
            "3",
            "--read-only-seconds",
            "2",
            "--call-timeout",
            "300",
            "--reports",
            str(tmp_path / "reports"),
        ],
        env=os.environ | {"RETRIEVAL_LOG_FORMAT": "json", "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=800,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    figures = json.loads((tmp_path / "reports" / "load.json").read_text())
    assert figures.keys() >= FIELDS
    assert (figures["errors"], figures["reads_alone_errors"], figures["error_kinds"]) == (0, 0, {})
    assert (figures["callers"], figures["readers"], figures["writers"]) == (10, 9, 1)
    assert figures["writes"] >= 1
    assert figures["requests"] > figures["writes"]
    assert figures["reads_alone_requests"] > 0
    assert 0 < figures["p50_ms"] <= figures["p95_ms"] <= figures["p99_ms"]
    assert figures["rss_start_mb"] > 0
    assert figures["rss_end_mb"] > 0
    assert "reads with writers / reads alone" in done.stdout
