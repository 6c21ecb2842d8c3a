"""The reports the benchmarks and golden runs write (``reports/`` by default), by name:
``golden.json``, ``golden.md`` and ``golden.png`` are the files of one report.

A Markdown file is the report as written for people; a JSON report without one is shown as
tables (``json_tables``); a PNG is a plot. Only the files directly in the directory count.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from pydantic import Field

from retrieval.domain.models import Frozen
from retrieval.errors import NotFoundError
from retrieval.evaluation.reports import number

SUFFIXES = (".json", ".md", ".png")
ABSENT = "-"
CELL_CHARS = 160
"""A longer cell is cut, with an ellipsis."""


class ReportFiles(Frozen):
    """The files of one report."""

    name: str = Field(description="The files' common stem: golden, bench, beir-scifact...")
    files: tuple[str, ...] = Field(description="File names, by name.")
    updated_at: datetime = Field(description="When the newest of them was written.")

    def with_suffix(self, suffix: str) -> str | None:
        return next((file for file in self.files if file.endswith(suffix)), None)

    @property
    def plots(self) -> tuple[str, ...]:
        return tuple(file for file in self.files if file.endswith(".png"))


class ReportTable(Frozen):
    """Part of a JSON report as a table of text cells."""

    title: str = Field(description="The key the part is under; empty for the top level.")
    columns: tuple[str, ...] = Field(description="Header; empty for a table of name, value.")
    rows: tuple[tuple[str, ...], ...] = Field(description="Cells, one tuple per row.")

    @property
    def numeric(self) -> set[int]:
        """Columns whose every cell is a number or absent, to be aligned right."""
        width = max((len(row) for row in self.rows), default=0)
        return {
            column
            for column in range(1, width)
            if all(is_number(row[column]) or row[column] == ABSENT for row in self.rows)
        }


def report_files(directory: Path) -> list[ReportFiles]:
    """Every report in ``directory``, the latest first; none when there is no directory."""
    if not directory.is_dir():
        return []
    by_name: dict[str, list[Path]] = {}
    for path in sorted(directory.iterdir()):
        if path.suffix in SUFFIXES and path.is_file():
            by_name.setdefault(path.stem, []).append(path)
    reports = [
        ReportFiles(
            name=name,
            files=tuple(path.name for path in paths),
            updated_at=max(modified(path) for path in paths),
        )
        for name, paths in by_name.items()
    ]
    return sorted(reports, key=lambda report: report.updated_at, reverse=True)


def report_named(directory: Path, name: str) -> ReportFiles:
    for report in report_files(directory):
        if report.name == name:
            return report
    raise NotFoundError(f"no report {name!r} in {directory}")


def report_file(directory: Path, file: str) -> Path:
    """The path of a file of a report, or ``NotFoundError``: never one outside the reports."""
    if not any(file in report.files for report in report_files(directory)):
        raise NotFoundError(f"no report file {file!r} in {directory}")
    return directory / file


def modified(path: Path) -> datetime:
    return datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)


def is_number(text: str) -> bool:
    try:
        float(text.replace(",", ""))
    except ValueError:
        return False
    return True


def cell(value: object) -> str:
    if value is None:
        return ABSENT
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return number(value)
    text = value if isinstance(value, str) else json.dumps(value, separators=(", ", ": "))
    return text if len(text) <= CELL_CHARS else text[: CELL_CHARS - 1] + "…"


def flat(value: object, path: tuple[str, ...] = ()) -> dict[str, object]:
    """Nested objects as one level, their keys joined with dots (an empty one has no leaf);
    anything else is a leaf."""
    if isinstance(value, dict):
        return {
            key: leaf
            for name, inner in value.items()
            for key, leaf in flat(inner, (*path, str(name))).items()
        }
    return {".".join(path): value}


def records(value: object) -> Mapping[str, object] | None:
    """A non-empty object of objects as is, a list of objects numbered from 1; else None."""
    if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
        return value
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return {str(position): item for position, item in enumerate(value, 1)}
    return None


def record_table(title: str, rows: Mapping[str, object]) -> ReportTable:
    """One row per record, one column per leaf any record has."""
    leaves = {name: flat(record) for name, record in rows.items()}
    columns = list(dict.fromkeys(key for row in leaves.values() for key in row))
    return ReportTable(
        title=title,
        columns=("", *columns),
        rows=tuple(
            (name, *(cell(row.get(column)) for column in columns)) for name, row in leaves.items()
        ),
    )


def value_table(title: str, values: Mapping[str, object]) -> ReportTable:
    return ReportTable(
        title=title, columns=(), rows=tuple((name, cell(value)) for name, value in values.items())
    )


def json_tables(report: object) -> list[ReportTable]:
    """A JSON report as tables: its plain values, then a table per nested part (one row per
    record of an object of objects or a list of objects; a name, value row per leaf else)."""
    if not isinstance(report, dict):
        rows = records(report)
        return [record_table("", rows) if rows else value_table("", {"value": report})]
    plain = {
        key: value
        for key, value in report.items()
        if not (isinstance(value, dict) and value) and records(value) is None
    }
    tables = [value_table("", plain)] if plain else []
    for key, value in report.items():
        if (rows := records(value)) is not None:
            tables.append(record_table(key, rows))
        elif isinstance(value, dict) and value:
            tables.append(value_table(key, flat(value)))
    return tables


def headline(report: object, most: int) -> dict[str, str]:
    """Up to ``most`` of a JSON report's plain top-level values, formatted."""
    if not isinstance(report, dict):
        return {}
    plain = [(key, value) for key, value in report.items() if not isinstance(value, dict | list)]
    return {key: cell(value) for key, value in plain[:most]}
