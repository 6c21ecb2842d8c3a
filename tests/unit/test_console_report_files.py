"""Reports by name from the files the runs wrote, and a JSON report as tables."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from retrieval.console.report_files import (
    json_tables,
    report_file,
    report_files,
    report_named,
)
from retrieval.errors import NotFoundError


def written(directory: Path, name: str, text: str = "{}", age_s: float = 0.0) -> Path:
    path = directory / name
    path.write_text(text)
    stamp = path.stat().st_mtime - age_s
    os.utime(path, (stamp, stamp))
    return path


def test_the_files_of_a_report_share_its_name_and_the_latest_report_comes_first(
    tmp_path: Path,
) -> None:
    written(tmp_path, "golden.json", age_s=60)
    written(tmp_path, "golden.md", "# Golden", age_s=60)
    written(tmp_path, "golden.png", age_s=60)
    written(tmp_path, "bench.json", age_s=10)
    written(tmp_path, "notes.txt")
    (tmp_path / "console").mkdir()
    written(tmp_path / "console", "query.png")

    reports = report_files(tmp_path)
    assert [(r.name, r.files) for r in reports] == [
        ("bench", ("bench.json",)),
        ("golden", ("golden.json", "golden.md", "golden.png")),
    ]
    golden = report_named(tmp_path, "golden")
    assert (golden.with_suffix(".md"), golden.plots) == ("golden.md", ("golden.png",))
    assert report_files(tmp_path / "missing") == []


@pytest.mark.parametrize("file", ["notes.txt", "../secret.json", "console/query.png", "nope.png"])
def test_only_a_report_s_own_files_are_served(tmp_path: Path, file: str) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    written(reports, "bench.json")
    written(reports, "notes.txt")
    written(tmp_path, "secret.json")
    (reports / "console").mkdir()
    written(reports / "console", "query.png")
    assert report_file(reports, "bench.json") == reports / "bench.json"
    with pytest.raises(NotFoundError):
        report_file(reports, file)


def test_a_json_report_becomes_a_table_of_its_values_and_one_per_nested_part() -> None:
    report = {
        "chunks": 10000,
        "ratio": 1.0395164,
        "cached": True,
        "model": None,
        "p50_ms": {"embed": 15.96, "total": 20.09},
        "ablation": {
            "default": {"hit_at_5": 1.0, "options": {}},
            "dense only": {"hit_at_5": 0.96154, "options": {"mode": "dense"}},
        },
        "rows": [{"id": "s01", "returned": ["a", "b"]}, {"id": "s02", "extra": "x" * 200}],
    }
    summary, p50, ablation, rows = json_tables(report)
    assert (summary.title, summary.columns) == ("", ())
    assert summary.rows == (
        ("chunks", "10,000"),
        ("ratio", "1.040"),
        ("cached", "yes"),
        ("model", "-"),
    )
    assert p50.rows == (("embed", "16.0"), ("total", "20.1"))
    assert ablation.columns == ("", "hit_at_5", "options.mode")
    assert ablation.rows == (("default", "1", "-"), ("dense only", "0.962", "dense"))
    assert ablation.numeric == {1}
    assert rows.columns == ("", "id", "returned", "extra")
    assert rows.rows[0] == ("1", "s01", '["a", "b"]', "-")
    assert rows.rows[1][3].endswith("…")
    assert len(rows.rows[1][3]) == 160


def test_a_json_report_that_is_a_list_is_one_table() -> None:
    (table,) = json_tables([{"name": "a", "ms": 1.5}, {"name": "b", "ms": 2}])
    assert table.rows == (("1", "a", "1.500"), ("2", "b", "2"))
    (plain,) = json_tables([1, 2])
    assert plain.rows == (("value", "[1, 2]"),)
