"""The reports page: the latest report of each benchmark and golden run, and one report with
its tables and plots."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import FileResponse, Response

from retrieval.console.rendering import Renderer, markdown_html
from retrieval.console.report_files import (
    ReportFiles,
    ReportTable,
    headline,
    json_tables,
    report_file,
    report_files,
    report_named,
)

HEADLINE_FIGURES = 8


@dataclass(frozen=True)
class ShownReport:
    """A report as its page shows it: the Markdown the run wrote, else its JSON as tables."""

    files: ReportFiles
    markdown: Markup | None
    tables: list[ReportTable]


@dataclass(frozen=True, eq=False)
class ReportPages:
    directory: Path
    render: Renderer

    async def index(self, request: Request) -> Response:
        listed = await asyncio.to_thread(self._headlines)
        return self.render.page(
            request, "reports.html", {"reports": listed, "directory": self.directory}
        )

    async def report(self, request: Request) -> Response:
        shown = await asyncio.to_thread(self._shown, request.path_params["name"])
        return self.render.page(request, "report.html", {"report": shown})

    async def file(self, request: Request) -> Response:
        path = await asyncio.to_thread(report_file, self.directory, request.path_params["file"])
        return FileResponse(path)

    def _headlines(self) -> list[tuple[ReportFiles, dict[str, str]]]:
        return [
            (report, headline(self._json(report), HEADLINE_FIGURES))
            for report in report_files(self.directory)
        ]

    def _shown(self, name: str) -> ShownReport:
        report = report_named(self.directory, name)
        markdown = report.with_suffix(".md")
        if markdown is not None:
            text = (self.directory / markdown).read_text(encoding="utf-8")
            return ShownReport(report, markdown_html(text), [])
        data = self._json(report)
        return ShownReport(report, None, json_tables(data) if data is not None else [])

    def _json(self, report: ReportFiles) -> object:
        """The report's JSON; None when it has none or it cannot be read."""
        file = report.with_suffix(".json")
        if file is None:
            return None
        try:
            return json.loads((self.directory / file).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
