from __future__ import annotations

from pathlib import Path

import typer

from retrieval.cli.runtime import console
from retrieval_bench.report import benchmarks_markdown
from retrieval_bench.targets import read_reports


def report(
    reports: Path = typer.Option(Path("reports"), help="Where the benchmarks wrote their JSON."),
    page: Path = typer.Option(Path("docs/benchmarks.md"), help="The page to write."),
) -> None:
    """docs/benchmarks.md from the reports of the last runs: targets, tables, PNG plots."""
    found = read_reports(reports)
    page.write_text(benchmarks_markdown(found, page.parent / "benchmarks"))
    console.print(f"written {page} from {len(found)} reports ({', '.join(sorted(found))})")
