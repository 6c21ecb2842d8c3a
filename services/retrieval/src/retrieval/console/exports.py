"""A query's result as a file a script or a spreadsheet reads: ``format=json`` or
``format=csv`` beside the query page's own parameters, one row per match."""

from __future__ import annotations

import csv
import io
from urllib.parse import urlencode

from starlette.datastructures import QueryParams
from starlette.responses import JSONResponse, Response

from retrieval.domain.models import RetrievalResult
from retrieval.errors import InvalidRequestError

FORMATS = ("json", "csv")
COLUMNS = ("rank", "score", "document_id", "title", "source", "section", "text")


def export_links(params: QueryParams) -> dict[str, str]:
    """The address of each export of the query ``params`` describe, by format."""
    kept = [(name, value) for name, value in params.multi_items() if name != "format"]
    return {name: f"/query?{urlencode([*kept, ('format', name)])}" for name in FORMATS}


def match_rows(result: RetrievalResult) -> list[dict[str, object]]:
    return [
        {
            "rank": rank,
            "score": match.score,
            "document_id": match.document_id,
            "title": match.title,
            "source": match.source,
            "section": match.section,
            "text": match.content,
        }
        for rank, match in enumerate(result.matches, 1)
    ]


def exported(result: RetrievalResult, format_name: str) -> Response:
    """The result's matches in ``format_name``; ``InvalidRequestError`` for another format."""
    if format_name == "json":
        return JSONResponse(
            {"query": result.query, "namespace": result.namespace, "matches": match_rows(result)}
        )
    if format_name == "csv":
        table = io.StringIO()
        writer = csv.DictWriter(table, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(match_rows(result))
        return Response(
            table.getvalue(),
            media_type="text/csv",
            headers={"Content-Disposition": f'attachment; filename="{result.namespace}.csv"'},
        )
    raise InvalidRequestError(f"must be one of {', '.join(FORMATS)}", field="format")


def export_failure(status: int, message: str) -> Response:
    return JSONResponse({"error": message}, status_code=status)
